"""The assistant (issue 7): one agent core behind every channel, reached through a small bus.

`Inbound`/`Outbound`/`Bus` (bus.py) are how channels and jobs talk to the agent; `Assistant`
(agent.py) answers one turn with `reply` or serves a bus with `run`; `assistant_from_app`
(build.py) wires it to a running NerveApp (gateway, memory, tools). The agent never imports a
channel. To add a channel: implement `nerve.channels.base.Channel` and subscribe to the bus.
"""

from nerve.assistant.agent import Assistant
from nerve.assistant.bus import Bus, Inbound, Outbound
from nerve.assistant.loop import ChatFn

__all__ = ["Assistant", "Bus", "ChatFn", "Inbound", "Outbound"]
