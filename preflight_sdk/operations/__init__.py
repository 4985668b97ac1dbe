"""The operations of `Project`, one class per tool group; `Project` (project.py) joins them.

Layer: the project's, beside `project.py`. Each group reads what `base.Operations` holds (the
environment, the runs, the saved tests) and is a short body per operation over the areas.

Every public coroutine of a group is an operation of `Project`, which inherits the group's class:
its docstring is the tool description an agent reads.
"""
