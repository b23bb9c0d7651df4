"""The built-in tools, one module each, found by `ToolRegistry.discover("nerve.tools.builtin")`.

memo, task (per user, kept in memory), read_file / write_file / send_file (the file sandbox),
shell (SF-5), web_search (Brave), weather (OpenWeatherMap); reminder and mcp_server live here too.
Modules starting with `_` are helpers, not tools.
"""
