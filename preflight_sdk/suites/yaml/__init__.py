"""The YAML runner (`runner`): its steps (`steps`: HTTP `request`s over `http`/`transport`, the other
actions in `actions`), their checks (`expect`, `expressions`) and the variables in scope (`scope`)."""
