"""JSON Schema validation of tool arguments and results, pluggable.

Owns the default :data:`~mcpwire.ValidatorFactory`, built on the ``jsonschema`` library
(JSON Schema 2020-12, the dialect of tool schemas; the ``mcpwire[jsonschema]`` extra). It is
imported only when called, so ``import mcpwire`` never loads it. Remote ``$ref`` targets are
never fetched: the registry has no retriever, so an unresolvable ref is a validation failure
(reported as the tool's error) rather than a network request.

Also owns :data:`UNCHECKED`, the factory a host passes to say "do not check raw JSON Schemas"
on purpose; the engine recognises it and compiles nothing.
"""

from __future__ import annotations

from typing import Any, Final, Mapping

from .catalog import SchemaCheck, ValidatorFactory

__all__ = ["jsonschema_validator", "UNCHECKED", "MISSING_VALIDATOR"]

MISSING_VALIDATOR: Final = (
    "is declared with a raw JSON Schema, and checking it needs a validator: install the"
    " jsonschema extra (pip install 'mcpwire[jsonschema]'), pass Server(validator=...), or pass"
    " Server(validator=mcpwire.UNCHECKED) to accept unchecked arguments and results on purpose"
)


def _accept_all(value: Any) -> str | None:
    return None


def _unchecked(schema: Mapping[str, Any]) -> SchemaCheck:
    """The validator factory that checks nothing: ``Server(validator=mcpwire.UNCHECKED)``.

    Tools declared with a raw JSON Schema then reach the host with whatever arguments the
    client sent (an object), and their structuredContent is not checked against a non-trivial
    outputSchema. Struct-typed tools (``arguments_type``/``output_type``) are still checked.
    """
    return _accept_all


UNCHECKED: Final[ValidatorFactory] = _unchecked
"""Pass as ``Server(validator=UNCHECKED)`` to leave raw JSON Schemas unchecked on purpose."""


def jsonschema_validator() -> ValidatorFactory | None:
    """A factory using ``jsonschema`` (Draft 2020-12 unless the schema's ``$schema`` says
    otherwise), or ``None`` when the library is not installed."""
    try:
        import jsonschema
        from jsonschema.exceptions import SchemaError
    except ImportError:  # pragma: no cover - depends on the environment
        return None

    def factory(schema: Mapping[str, Any]) -> SchemaCheck:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(dict(schema))
        except SchemaError as exc:
            raise ValueError(f"Invalid JSON Schema: {exc.message}") from None
        validator = cls(dict(schema))

        def check(value: Any) -> str | None:
            try:
                error = jsonschema.exceptions.best_match(validator.iter_errors(value))
            except Exception as exc:  # e.g. an unresolvable remote $ref
                return f"schema could not be applied: {type(exc).__name__}"
            if error is None:
                return None
            where = "/".join(str(p) for p in error.absolute_path)
            return f"{where}: {error.message}" if where else error.message

        return check

    return factory
