"""JSON Schema validation of tool arguments and results, pluggable.

Owns the default :data:`~mcpwire.ValidatorFactory`, built on the ``jsonschema`` library
(JSON Schema 2020-12, the dialect of tool schemas; the ``mcpwire[jsonschema]`` extra). It is
imported only when called, so ``import mcpwire`` never loads it. Remote ``$ref`` targets are
never fetched: the registry has no retriever, so an unresolvable ref is a validation failure
(reported as the tool's error) rather than a network request.
"""

from __future__ import annotations

from typing import Any, Mapping

from .catalog import SchemaCheck, ValidatorFactory

__all__ = ["jsonschema_validator"]


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
