"""A one-file MCP server: the weather, over stdio.

Run it under a client (``python examples/quickstart.py``), or watch the
protocol with ``MINIMCP_TRACE=1 python examples/quickstart.py``.
"""

from typing import Annotated, Literal

from minimcp import Server

server = Server("weather", version="1.0.0")

FORECASTS = {"kraków": (22, "sunny"), "london": (14, "rain"), "tokyo": (27, "humid")}


@server.tool()
def get_weather(city: Annotated[str, "City name"], units: Literal["c", "f"] = "c") -> str:
    """Get the current weather for a city."""
    celsius, sky = FORECASTS.get(city.lower(), (22, "sunny"))
    degrees = celsius if units == "c" else round(celsius * 9 / 5 + 32)
    return f"{city}: {degrees}°{units.upper()}, {sky}"


@server.tool()
def get_forecast(city: str, days: int = 3) -> dict:
    """Get a forecast for the next few days.

    Args:
        city: City name.
        days: How many days, 1 to 7.
    """
    celsius, sky = FORECASTS.get(city.lower(), (22, "sunny"))
    return {"city": city, "days": [{"day": d + 1, "celsius": celsius + d, "sky": sky} for d in range(days)]}


@server.resource("weather://{city}/current", mime_type="application/json")
def current(city: str) -> dict:
    """The current conditions in a city, as data."""
    celsius, sky = FORECASTS.get(city.lower(), (22, "sunny"))
    return {"city": city, "celsius": celsius, "sky": sky}


@server.prompt()
def forecast(city: str) -> str:
    """Ask for a three-day forecast."""
    return f"Give me a three day forecast for {city}."


if __name__ == "__main__":
    server.run()                      # stdio; server.run("http", port=8000) for HTTP
