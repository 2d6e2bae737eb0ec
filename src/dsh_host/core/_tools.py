"""Tool layers and argument-schema validation.

Two layers exist: the global layer (the host's) and one layer per Agent that shadows the global
one for that Agent only. Registration returns an idempotent disposer; a duplicate name within a
layer is refused. Arguments are validated against the tool's JSON-Schema subset before the body
runs; a violation is the value ``{"code": "invalid_arguments", "message": ...}``. JSON ``true``
is never an integer or a number. ``oneOf`` means exactly one branch: a value that matches none,
or more than one, is a violation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dsh_hookspecs import JSONValue, Tool, ToolConflictError


class ToolLayer:
    """One layer of tools (implements :class:`dsh_hookspecs.ToolRegistry`)."""

    __slots__ = ("_tools",)

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool) -> Callable[[], None]:
        if not isinstance(tool, Tool):
            raise TypeError("register() takes a dsh_hookspecs.Tool")
        if tool.name in self._tools:
            raise ToolConflictError(f"tool {tool.name!r} is already registered in this layer")
        _check_once(tool.parameters)
        self._tools[tool.name] = tool
        return _Unregister(self._tools, tool)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> Sequence[str]:
        return tuple(self._tools)


class _Unregister:
    """The idempotent disposer of one registration (a slotted object: thousands are live)."""

    __slots__ = ("_tool", "_tools")

    def __init__(self, tools: dict[str, Tool], tool: Tool) -> None:
        self._tools = tools
        self._tool = tool

    def __call__(self) -> None:
        # Only this registration: a later one under the same name is left alone.
        if self._tools.get(self._tool.name) is self._tool:
            del self._tools[self._tool.name]


def resolve(name: str, *layers: ToolLayer) -> Tool | None:
    """The first layer holding ``name`` wins (Agent layer before the global layer)."""
    for layer in layers:
        tool = layer.get(name)
        if tool is not None:
            return tool
    return None


_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "items",
        "description",
        "oneOf",
    }
)


class SchemaError(ValueError):
    """A tool's parameter schema uses something the host cannot validate."""


#: Schemas already checked, by identity (each kept alive, so its id stays its own): a plugin
#: registers the same Tool objects in every Agent's layer, and a herd of resumed Sessions must
#: not re-walk them each time. A schema is not to be changed once registered.
_CHECKED: dict[int, Mapping[str, Any]] = {}
_CHECKED_MAX = 256


def _check_once(schema: Mapping[str, Any]) -> None:
    if _CHECKED.get(id(schema)) is schema:
        return
    check_schema(schema)
    if len(_CHECKED) >= _CHECKED_MAX:
        _CHECKED.clear()
    _CHECKED[id(schema)] = schema


def check_schema(schema: Mapping[str, Any], path: str = "$") -> None:
    """Refuse schemas the validator would silently ignore."""
    unknown = set(schema) - _KEYWORDS
    if unknown:
        raise SchemaError(f"unsupported schema keywords at {path}: {sorted(unknown)}")
    kind = schema.get("type")
    if kind is not None and kind not in _TYPES:
        raise SchemaError(f"unsupported type {kind!r} at {path}")
    for name, sub in schema.get("properties", {}).items():
        check_schema(sub, f"{path}.{name}")
    if "items" in schema:
        check_schema(schema["items"], f"{path}[]")
    if "oneOf" in schema:
        branches = schema["oneOf"]
        if not isinstance(branches, list | tuple) or not branches:
            raise SchemaError(f"oneOf at {path} must be a non-empty list of schemas")
        for index, branch in enumerate(branches):
            check_schema(branch, f"{path}.oneOf[{index}]")


def _type_ok(kind: str, value: JSONValue) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "integer":
        # Strict like the event codecs: 1.0 is a number, not an integer.
        return type(value) is int
    # "number"
    return type(value) in (int, float)


def validate_arguments(schema: Mapping[str, Any], value: JSONValue, path: str = "$") -> str | None:
    """Return the first violation as a message, or ``None`` when ``value`` conforms."""
    kind = schema.get("type")
    if kind is not None and not _type_ok(kind, value):
        return f"{path} must be of type {kind}"
    if "enum" in schema and not any(
        type(value) is type(option) and value == option for option in schema["enum"]
    ):
        return f"{path} must be one of {schema['enum']!r}"
    if "oneOf" in schema:
        matched = sum(validate_arguments(branch, value, path) is None for branch in schema["oneOf"])
        if matched != 1:
            return f"{path} must match exactly one of its {len(schema['oneOf'])} schemas"
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                return f"{path}.{name} is required"
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(properties))
            if extra:
                return f"{path} has unexpected properties {extra}"
        for name, sub in properties.items():
            if name in value:
                problem = validate_arguments(sub, value[name], f"{path}.{name}")
                if problem:
                    return problem
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            problem = validate_arguments(schema["items"], item, f"{path}[{index}]")
            if problem:
                return problem
    return None
