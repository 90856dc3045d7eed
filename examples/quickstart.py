"""Start the weather server, list its tools, and call one.

    pip install . && python examples/quickstart.py
"""

import os
import sys

import minimcp

server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weather_server.py")

with minimcp.connect([sys.executable, server]) as client:
    print(f"connected to {client.server_info['name']} (protocol {client.protocol_version})")
    for tool in client.list_tools():          # follows nextCursor by itself
        print(f"  tool {tool.name}: {tool.description}")
    result = client.call_tool("get_weather", {"city": "Kraków"})
    print(result.text)                        # joined text blocks
    forecast = client.call_tool("get_forecast", {"city": "Kraków", "days": 2})
    for day in forecast.structured["days"]:   # structuredContent: data, for code
        print(f"  day {day['day']}: {day['celsius']}°C, {day['sky']}")
