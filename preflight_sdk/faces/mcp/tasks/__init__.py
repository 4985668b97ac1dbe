"""MCP Tasks: a long tool call answered with a task any later server can follow.

`wire` serves both protocol generations, `support` turns a call into a task, `state` maps a run
onto a task, `notify` pushes a task's changes, `files` keeps call tasks on disk.
"""
