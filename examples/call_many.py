"""Call many tools at once: submit every call, then take each result as it comes.

    python examples/call_many.py

``submit_tool_call()`` returns a standard ``concurrent.futures.Future`` at once;
``as_completed()`` hands them back in the order they finish. The calls run on the
client's own call threads: no pool to make, none to shut down.
"""

import os
import sys
from concurrent.futures import as_completed

import minimcp

server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weather_server.py")
cities = ["Kraków", "London", "Tokyo", "Lima", "Oslo"]

with minimcp.connect([sys.executable, server]) as client:
    futures = {client.submit_tool_call("get_weather", {"city": city}, timeout=10): city for city in cities}
    weather = {}
    for future in as_completed(futures, timeout=30):    # as each answer comes
        weather[futures[future]] = future.result().text  # or raises what call_tool() would
    for city in cities:                                  # back in the order asked
        print(weather[city])

    forecast = client.submit_tool_call("get_forecast", {"city": "Tokyo", "days": 2})
    print(f"{len(forecast.result(timeout=10).structured['days'])} days of forecast for Tokyo")
