"""PATCH bodies as kube-apiserver applies them, and what a patched object changed.

:func:`apply_patch` applies the three patch types of ``kubectl patch`` and of every other
kubectl write (``scale``, ``set image``, ``set env``, ``set resources``, ``rollout restart``,
``rollout undo``, ``cordon``, ``taint``, ``label``...):

* ``application/json-patch+json`` -- RFC 6902 (``add``, ``remove``, ``replace``, ``move``,
  ``copy``, ``test``; RFC 6901 pointers with ``~0``/``~1`` escapes; ``-`` appends), with the
  behaviour of ``gopkg.in/evanphx/json-patch.v4`` that kube-apiserver uses: negative array
  indices count from the end, at most 10000 operations (413), a failed operation is
  ``422 Invalid`` worded as ``k8s.io/apiserver/pkg/endpoints/handlers/patch.go`` words it;
* ``application/merge-patch+json`` -- RFC 7386;
* ``application/strategic-merge-patch+json`` -- ``k8s.io/apimachinery/pkg/util/strategicpatch``
  with the server's options (``MergeParallelList``, ``IgnoreUnmatchedNulls``): lists merge by
  the merge keys of the Go types, ``$patch: replace|delete`` (on maps and list elements;
  ``$patch: merge`` is refused, as ``handleDirectiveInMergeMap`` and
  ``mergeSliceWithSpecialElements`` refuse it: "merging lists cannot yet be specified in the
  patch"), ``$retainKeys``, ``$setElementOrder/<list>`` (the listed elements in that order;
  an element only the server has keeps its place relative to the others, as
  ``mergeSortedSlice`` places it), ``$deleteFromPrimitiveList/<list>``.

The merge keys come from the struct tags of ``k8s.io/api`` (commit 10b39a39, 2026-07):
``core/v1/types.go`` ``PodSpec.Containers``/``InitContainers``/``EphemeralContainers``
``patchStrategy:"merge" patchMergeKey:"name"``, ``PodSpec.Volumes`` ``"merge,retainKeys"``
by ``name``, ``ImagePullSecrets`` by ``name``, ``HostAliases`` by ``ip``,
``TopologySpreadConstraints`` by ``topologyKey``, ``SchedulingGates`` and ``ResourceClaims``
by ``name``; ``Container.Ports`` by ``containerPort``, ``Env`` by ``name``, ``VolumeMounts`` by
``mountPath``, ``VolumeDevices`` by ``devicePath``; ``ServiceSpec.Ports`` by ``port``;
``NodeSpec.PodCIDRs`` ``"merge"`` (a primitive list); ``NodeStatus.Conditions``/``Addresses``
and every ``*Status.Conditions`` by ``type``; ``ObjectMeta.Finalizers`` ``"merge"`` and
``OwnerReferences`` by ``uid`` (``apimachinery/pkg/apis/meta/v1/types.go``);
``apps/v1/types.go`` ``DeploymentSpec.Strategy`` ``"retainKeys"``. Lists without a tag
(``tolerations``, ``NodeSpec.Taints``, ``envFrom``, ``args``, ``command``,
``volumeClaimTemplates``...) are atomic: the patch's list replaces the object's.

Where this departs from kube-apiserver (each is noted where it happens): patches nested
deeper than :data:`MAX_DEPTH` levels are refused with 400 (the Go decoder allows 10000); a
strategic patch the Go code rejects with a plain error (a 500 from the real server: a list
element without its merge key, a ``$patch`` directive it does not know) is a ``400
BadRequest`` here; a strategic patch of a kind with no Go type (a custom object) is refused
with 415 as the real server refuses it for custom resources; values a strategic patch adds
where the object had none are taken as the Go code takes them (as is) but without their
directives and nulls, which the server's typed decoding would drop; the patched object is
not decoded into the Go types here, so a field of the wrong type or an unknown field stays in
it (:func:`deployment_change`, :func:`node_change` and :func:`service_change` validate what
they read, with the apiserver's ``422 Invalid``); ``application/apply-patch+yaml``
(server-side apply) is refused with 415.

``tests/test_kube_patching.py`` checks all of this against ``kubectl patch --local``, which
runs the same Go code (``strategicpatch`` with the Go types' tags, ``json-patch`` v4) without
a server.

:func:`deployment_change`, :func:`node_change`, :func:`service_change`,
:func:`statefulset_change` and :func:`scale_change` say what a patched (or replaced) object
changed, as the typed writes of :mod:`engine.kube.protocol`, and refuse what the simulated
cluster cannot express with ``422 Invalid``. The bodies kubectl 1.37 sends for each of its
write commands are in ``tests/data/kube_patches`` (``tests/kube_patch_capture.py``).
"""

from __future__ import annotations

import copy
import json
import math
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.apps.model import Probe, ResourceList, Resources
from engine.kube.protocol import KEEP, ApiError, DeploymentChange, NodeChange
from engine.kubectl.apiobjects import served
from engine.kubectl.quantity import Quantity

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
SUPPORTED_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)
"""The patch types :func:`apply_patch` applies, in the order kube-apiserver lists them."""

MAX_DEPTH = 100
"""Most levels of nesting a patch (and a patched object) may have. A Deployment is about 12
deep; kube-apiserver allows 10000 (the Go JSON decoder's limit), which a recursive merge in
Python cannot follow."""
MAX_JSON_PATCH_OPERATIONS = 10000
"""``maxJSONPatchOperations`` of ``k8s.io/apiserver/pkg/endpoints/handlers/patch.go``."""
MAX_COPIED_NODES = 100_000
"""Most JSON values (objects, arrays and scalars, counted recursively) the ``copy``
operations of one JSON patch may duplicate, as json-patch's ``AccumulatedCopySizeLimit``
bounds the bytes a patch may copy (a chain of copies otherwise doubles the document each
step)."""

Obj = dict[str, Any]


# ----------------------------------------------------------------- errors


def _bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def _unprocessable(message: str) -> ApiError:
    """What patch.go returns when a JSON patch does not apply (``NewGenericServerResponse(422...)``).

    A real v1.37 server answers a failed ``test``, a missing path and a bad index alike, with
    empty ``details``, and kubectl prints ``The request is invalid: the server rejected our
    request due to an error in our request``. The reason (json-patch's wording, e.g. ``testing
    value /spec/replicas failed: test failed``) is kept as a note on the exception, for logs
    and tests, and is not sent.
    """
    error = ApiError(422, "Invalid", "the server rejected our request due to an error in our request")
    error.add_note(message)
    return error


def _go_value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))[:200]


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error`` of ``k8s.io/apimachinery/pkg/util/validation/field``.

    Attributes:
        type: ``Invalid``, ``Required``, ``Forbidden`` or ``Unsupported``.
        field: the field's path, e.g. ``spec.replicas``.
        detail: what is wrong.
        value: the bad value (shown for ``Invalid`` and ``Unsupported``).
    """

    type: Literal["Invalid", "Required", "Forbidden", "Unsupported"]
    field: str
    detail: str
    value: Any = None

    def message(self) -> str:
        """The error's text without the field (``Invalid value: -1: must be ...``)."""
        if self.type == "Invalid":
            return f"Invalid value: {_go_value(self.value)}: {self.detail}"
        if self.type == "Unsupported":
            return f"Unsupported value: {_go_value(self.value)}: {self.detail}"
        return f"{'Required value' if self.type == 'Required' else 'Forbidden'}: {self.detail}"


_CAUSE = {"Invalid": "FieldValueInvalid", "Required": "FieldValueRequired", "Forbidden": "FieldValueForbidden",
          "Unsupported": "FieldValueNotSupported"}


def invalid(kind: str, group: str, name: str, errors: Sequence[FieldError]) -> ApiError:
    """``errors.NewInvalid``: ``422 Invalid``, worded as kube-apiserver words it.

    Args:
        kind: the object's kind (``Deployment``).
        group: its API group (``apps``; ``""`` for the core group).
        name: its name.
        errors: at least one field error.

    Returns:
        An :class:`ApiError` whose message is ``Deployment.apps "frontend" is invalid:
        spec.replicas: Invalid value: -1: must be greater than or equal to 0`` and whose
        ``details.causes`` lists each error (``reason``, ``message``, ``field``).
    """
    texts = [f"{e.field}: {e.message()}" for e in errors]
    qualified = f"{kind}.{group}" if group else kind
    summary = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {summary}',
                    {"name": name, "group": group, "kind": kind,
                     "causes": [{"reason": _CAUSE[e.type], "message": e.message(), "field": e.field}
                                for e in errors]})


def unsupported_media_type(content_type: str) -> ApiError:
    """The 415 kube-apiserver returns for a PATCH whose Content-Type it does not take
    (``negotiation.NewUnsupportedMediaTypeError``)."""
    del content_type  # the real message lists what is accepted, not what was sent
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                    "accepted media types include: " + ", ".join(SUPPORTED_PATCH_TYPES))


# ----------------------------------------------------------------- JSON decoding


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # Go: "cannot unmarshal number 1e400 into Go value of type float64"
        raise ValueError(f"cannot unmarshal number {text} into Go value of type float64")
    return value


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a JSON value, iteratively; stops counting past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def decode_json(body: bytes | str) -> Any:
    """A request body as JSON, as kube-apiserver decodes one.

    Raises:
        ApiError: 400 BadRequest for a body that is not UTF-8 JSON (``NaN`` and ``Infinity``
            included, which Go rejects), or nested deeper than :data:`MAX_DEPTH`.
    """
    try:
        text = body.decode("utf-8") if isinstance(body, (bytes, bytearray)) else str(body)
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except UnicodeDecodeError as exc:
        raise _bad_request(f"invalid character in request body: {exc}") from None
    except RecursionError:
        raise _bad_request(f"the patch is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise _bad_request(f"error decoding patch: {exc}") from None
    if _depth(value, MAX_DEPTH) > MAX_DEPTH:
        raise _bad_request(f"the patch is nested deeper than {MAX_DEPTH} levels")
    return value


def _json_equal(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1, 1 is 1.0, object key order does not matter.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _hkey(value: Any) -> str:
    """A hashable key for a JSON value (for merge keys and primitive lists; true is not 1)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# ----------------------------------------------------------------- apply_patch


def apply_patch(obj: Mapping[str, Any], content_type: str, body: bytes | str) -> Obj:
    """``obj`` patched with ``body``, as kube-apiserver patches a stored object.

    Args:
        obj: the object as served (``kind``, ``apiVersion``, ``metadata``, ``spec``...); not
            modified.
        content_type: the request's Content-Type; parameters (``; charset=utf-8``) are ignored
            as the server ignores them.
        body: the patch, UTF-8 JSON.

    Returns:
        A new object. Its ``kind``, ``apiVersion``, ``metadata.name`` and
        ``metadata.namespace`` are those of ``obj``.

    Raises:
        ApiError: 415 UnsupportedMediaType for another Content-Type (server-side apply
        included) or a strategic patch of a kind without a Go type; 400 BadRequest for a body
        that does not decode, is of the wrong shape for its patch type, or renames the object;
        413 RequestEntityTooLarge for a JSON patch of more than 10000 operations; 422 Invalid
        for a JSON patch operation that does not apply (a failed ``test``, a missing path) or
        a strategic patch that contradicts its ``$retainKeys``. Nothing else.
    """
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in SUPPORTED_PATCH_TYPES:
        raise unsupported_media_type(content_type)
    kind = obj.get("kind")
    schema = _ROOTS.get(kind) if isinstance(kind, str) else None
    if media == STRATEGIC_MERGE_PATCH and schema is None:
        raise unsupported_media_type(content_type)
    patch = decode_json(body)
    original: Obj = copy.deepcopy(dict(obj))
    result: Any
    if patch is None and media != MERGE_PATCH:
        # Go decodes a "null" strategic or JSON patch as an empty one: the object is unchanged
        patch = [] if media == JSON_PATCH else {}
    if media == JSON_PATCH:
        result = _json_patch(original, patch)
    elif media == MERGE_PATCH:
        if not isinstance(patch, dict):
            raise _bad_request("Invalid JSON Patch")  # jsonpatch.ErrBadJSONPatch
        result = _merge_patch(original, patch)
    else:
        if not isinstance(patch, dict):
            raise _bad_request(f"json: cannot unmarshal {_go_type(patch)} into Go value of type "
                               "map[string]interface {}")
        assert schema is not None
        try:
            result = _smp_map(original, patch, schema, 0)
        except RecursionError:
            raise _bad_request(f"the patch is nested deeper than {MAX_DEPTH} levels") from None
    if not isinstance(result, dict):
        raise _bad_request(f"the patched object is not a JSON object but {_go_type(result)}")
    _check_identity(obj, result)
    return result


def _go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if value is None:
        return "null"
    return "object"


def _check_identity(before: Mapping[str, Any], after: Obj) -> None:
    # patch.go: a patch may not rename the object or move it to another namespace
    # ("the name of the object (x) does not match the name on the URL (y)"), nor change its kind.
    meta_b = before.get("metadata") if isinstance(before.get("metadata"), Mapping) else {}
    meta_a = after.get("metadata")
    if not isinstance(meta_a, dict):
        raise _bad_request(f"metadata: the patched object's metadata is {_go_type(meta_a)}, not an object")
    assert isinstance(meta_b, Mapping)
    if meta_a.get("name") != meta_b.get("name"):
        raise _bad_request(f"the name of the object ({meta_a.get('name') or ''}) does not match the name on the "
                           f"URL ({meta_b.get('name') or ''})")
    if meta_a.get("namespace", meta_b.get("namespace")) != meta_b.get("namespace"):
        raise _bad_request(f"the namespace of the object ({meta_a.get('namespace')}) does not match the namespace "
                           f"on the request ({meta_b.get('namespace')})")
    for key in ("kind", "apiVersion"):
        if key in before and after.get(key) != before.get(key):
            raise _bad_request(f"{key} of the patched object ({after.get(key)}) does not match the object's "
                               f"({before.get(key)})")


# ----------------------------------------------------------------- JSON patch (RFC 6902)


def _pointer(path: Any, what: str = "path") -> list[str]:
    if not isinstance(path, str):
        raise _unprocessable(f"operation missing or invalid {what} (a JSON pointer string)")
    if path == "":
        return []
    if not path.startswith("/"):
        raise _unprocessable(f"JSON pointer must be empty or start with a \"/\": {path}")
    # RFC 6901: ~1 is "/" and ~0 is "~", decoded in that order.
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(token: str, length: int, *, allow_end: bool, path: str) -> int:
    """An array index token as json-patch v4 reads it (``strconv.Atoi``, negatives from the end)."""
    body = token[1:] if token[:1] in "+-" else token
    if not body or not body.isdigit() or not body.isascii() or len(body) > 18:
        raise _unprocessable(f"Unable to access invalid index: {token}: invalid index referenced: {path}")
    idx = int(token)
    limit = length if allow_end else length - 1
    if idx < 0:
        if idx < -length:
            raise _unprocessable(f"Unable to access invalid index: {idx}: invalid index referenced: {path}")
        idx += length
    if idx > limit:
        raise _unprocessable(f"Unable to access invalid index: {idx}: invalid index referenced: {path}")
    return idx


def _parent(doc: Any, tokens: list[str], op: str, path: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), allow_end=False, path=path)]
        else:
            raise _unprocessable(f"{op} operation does not apply: doc is missing path: \"{path}\": missing value")
    if not isinstance(node, (dict, list)):
        raise _unprocessable(f"{op} operation does not apply: doc is missing path: \"{path}\": missing value")
    return node


def _get(doc: Any, tokens: list[str], op: str, path: str) -> Any:
    if not tokens:
        return doc
    parent = _parent(doc, tokens, op, path)
    key = tokens[-1]
    if isinstance(parent, dict):
        # json-patch v4's partialDoc.get: a missing key of an existing object reads as null, so
        # "replace" there adds, "copy" from there copies null and "test" of null passes (as
        # kubectl patch --local, the same Go code, shows)
        return parent.get(key)
    return parent[_index(key, len(parent), allow_end=False, path=path)]


def _add(doc: Any, tokens: list[str], value: Any, path: str, op: str = "add") -> Any:
    if not tokens:  # only "replace" may target the whole document
        raise _unprocessable(f"{op} operation does not apply: doc is missing path: \"\": missing value")
    parent = _parent(doc, tokens, op, path)
    key = tokens[-1]
    if isinstance(parent, dict):
        parent[key] = value
    elif key == "-":
        parent.append(value)
    else:
        parent.insert(_index(key, len(parent), allow_end=True, path=path), value)
    return doc


def _remove(doc: Any, tokens: list[str], path: str, op: str = "remove") -> tuple[Any, Any]:
    if not tokens:
        raise _unprocessable(f"{op} operation does not apply: cannot remove the document root")
    parent = _parent(doc, tokens, op, path)
    key = tokens[-1]
    if isinstance(parent, dict):
        if key not in parent:
            raise _unprocessable(f"{op} operation does not apply: doc is missing key: {path}: missing value")
        return doc, parent.pop(key)
    return doc, parent.pop(_index(key, len(parent), allow_end=False, path=path))


def _count_nodes(value: Any, limit: int) -> int:
    count, stack = 0, [value]
    while stack and count <= limit:
        v = stack.pop()
        count += 1
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return count


def _json_patch(doc: Obj, patch: Any) -> Any:
    if not isinstance(patch, list):
        raise _bad_request(f"json: cannot unmarshal {_go_type(patch)} into Go value of type jsonpatch.Patch")
    if len(patch) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum operations in a "
                       f"JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(patch)}")
    for operation in patch:
        if not isinstance(operation, dict):
            raise _bad_request(f"json: cannot unmarshal {_go_type(operation)} into Go value of type "
                               "jsonpatch.Operation")
        for key in ("op", "path", "from"):
            if key in operation and not isinstance(operation[key], str):
                raise _bad_request(f"json: cannot unmarshal {_go_type(operation[key])} into Go value of type "
                                   "string")
    doc_: Any = doc
    copied = 0
    for operation in patch:
        op = operation.get("op")
        path = operation.get("path")
        tokens = _pointer(path)
        assert isinstance(path, str)
        # json-patch v4 reads a missing "value" as null (Operation.value() returns nil)
        if op == "add":
            doc_ = _add(doc_, tokens, copy.deepcopy(operation.get("value")), path)
        elif op == "remove":
            doc_, _ = _remove(doc_, tokens, path)
        elif op == "replace":
            value = copy.deepcopy(operation.get("value"))
            if not tokens:
                doc_ = value
            else:
                parent = _parent(doc_, tokens, "replace", path)
                key = tokens[-1]
                if isinstance(parent, dict):
                    parent[key] = value
                else:
                    parent[_index(key, len(parent), allow_end=False, path=path)] = value
        elif op in ("move", "copy"):
            source = operation.get("from")
            from_tokens = _pointer(source, "from")
            assert isinstance(source, str)
            if op == "move":
                if len(tokens) > len(from_tokens) and tokens[:len(from_tokens)] == from_tokens:
                    raise _unprocessable(f"move operation does not apply: cannot move {source} into its own "
                                         f"child {path}")
                if tokens == from_tokens:
                    _get(doc_, from_tokens, op, source)
                    continue
                doc_, value = _remove(doc_, from_tokens, source, "move")
            else:
                value = _get(doc_, from_tokens, "copy", source)
                copied += _count_nodes(value, MAX_COPIED_NODES)
                if copied > MAX_COPIED_NODES:
                    raise _unprocessable("Unable to complete the copy, the accumulated size increase of copy "
                                         f"exceeds the limit of {MAX_COPIED_NODES} values")
                value = copy.deepcopy(value)
            doc_ = _add(doc_, tokens, value, path, op)
        elif op == "test":
            try:
                actual = _get(doc_, tokens, "test", path)
            except ApiError:
                raise _unprocessable(f"testing value {path} failed: test failed") from None
            if not _json_equal(actual, operation.get("value")):
                raise _unprocessable(f"testing value {path} failed: test failed")
        else:
            raise _unprocessable(f"Unexpected kind: {op}")
        if op in ("add", "replace", "move", "copy"):
            placed = operation.get("value") if op in ("add", "replace") else value
            # the value now sits len(tokens) levels down: that plus its own depth is the document's
            if len(tokens) + _depth(placed, MAX_DEPTH) > MAX_DEPTH:
                raise _unprocessable(f"the patched object is nested deeper than {MAX_DEPTH} levels")
    return doc_


# ----------------------------------------------------------------- JSON merge patch (RFC 7386)


def _merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = target if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


# ----------------------------------------------------------------- strategic merge patch: the Go types' tags


@dataclass(frozen=True)
class _Field:
    """A field's patch metadata: ``patchStrategy`` (``merge`` lists; untagged lists are
    replaced), ``patchMergeKey``, and the struct type of the value (or of a list's elements)."""

    merge: bool = False
    key: str = ""
    type: str = ""


def _merge_by(key: str, type_: str = "") -> _Field:
    return _Field(True, key, type_)


_TYPES: dict[str, dict[str, _Field]] = {
    "ObjectMeta": {"finalizers": _Field(merge=True), "ownerReferences": _merge_by("uid")},
    "Deployment": {"metadata": _Field(type="ObjectMeta"), "spec": _Field(type="DeploymentSpec"),
                   "status": _Field(type="Conditions")},
    "DeploymentSpec": {"template": _Field(type="PodTemplateSpec")},
    "ReplicaSet": {"metadata": _Field(type="ObjectMeta"), "spec": _Field(type="DeploymentSpec"),
                   "status": _Field(type="Conditions")},
    "StatefulSet": {"metadata": _Field(type="ObjectMeta"), "spec": _Field(type="StatefulSetSpec"),
                    "status": _Field(type="Conditions")},
    "StatefulSetSpec": {"template": _Field(type="PodTemplateSpec")},
    "Conditions": {"conditions": _merge_by("type")},
    "PodTemplateSpec": {"metadata": _Field(type="ObjectMeta"), "spec": _Field(type="PodSpec")},
    "Pod": {"metadata": _Field(type="ObjectMeta"), "spec": _Field(type="PodSpec"), "status": _Field(type="PodStatus")},
    "PodStatus": {"conditions": _merge_by("type"), "podIPs": _merge_by("ip"), "hostIPs": _merge_by("ip")},
    "PodSpec": {
        "volumes": _merge_by("name"),
        "initContainers": _merge_by("name", "Container"),
        "containers": _merge_by("name", "Container"),
        "ephemeralContainers": _merge_by("name", "Container"),
        "imagePullSecrets": _merge_by("name"),
        "hostAliases": _merge_by("ip"),
        "topologySpreadConstraints": _merge_by("topologyKey"),
        "schedulingGates": _merge_by("name"),
        "resourceClaims": _merge_by("name"),
    },
    "Container": {"ports": _merge_by("containerPort"), "env": _merge_by("name"),
                  "volumeMounts": _merge_by("mountPath"), "volumeDevices": _merge_by("devicePath")},
    "Service": {"metadata": _Field(type="ObjectMeta"), "spec": _Field(type="ServiceSpec"),
                "status": _Field(type="Conditions")},
    "ServiceSpec": {"ports": _merge_by("port")},
    "Node": {"metadata": _Field(type="ObjectMeta"), "spec": _Field(type="NodeSpec"),
             "status": _Field(type="NodeStatus")},
    "NodeSpec": {"podCIDRs": _Field(merge=True)},
    "NodeStatus": {"conditions": _merge_by("type"), "addresses": _merge_by("type")},
    "": {},
}
_TYPES["Scale"] = {}
_ROOTS = {kind: kind for kind in ("Deployment", "ReplicaSet", "StatefulSet", "Pod", "Service", "Node", "Scale")}
"""Kinds a strategic merge patch applies to (the kinds with a Go type here)."""

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"


def _field(type_: str, key: str) -> _Field:
    return _TYPES.get(type_, {}).get(key, _Field())


def _smp_map(original: Any, patch: Obj, type_: str, depth: int) -> Obj:
    """``mergeMap`` of strategicpatch/patch.go (server options: parallel lists, unmatched nulls ignored)."""
    if depth > MAX_DEPTH:
        raise _bad_request(f"the patch is nested deeper than {MAX_DEPTH} levels")
    if _DIRECTIVE in patch:
        directive = patch[_DIRECTIVE]
        if directive == "replace":
            stripped: Obj = _strip(patch, depth)
            return stripped
        if directive == "delete":
            return {}
        raise _bad_request(f"unknown patch type: {_go_value(directive)} in map: {_go_value(patch)}")
    result: Obj = original if isinstance(original, dict) else {}
    patch = dict(patch)
    if _RETAIN_KEYS in patch:
        retain = patch.pop(_RETAIN_KEYS)
        if not isinstance(retain, list) or not all(isinstance(k, str) for k in retain):
            raise _bad_request("invalid patch format of retainKeys")
        keep = set(retain)
        for k in patch:
            if not k.startswith("$") and k not in keep:
                raise _unprocessable("patch content doesn't match retainKeys list")  # ErrPatchContentNotMatchRetainKeys
        for k in [k for k in result if k not in keep]:
            del result[k]
    for k in [k for k in patch if k.startswith(_DELETE_PRIMITIVE)]:
        values = patch.pop(k)
        name = k[len(_DELETE_PRIMITIVE):]
        current = result.get(name)
        # preprocessDeletionListForMerging: skipped when the object has no such list or the
        # directive's value is not a list; objects in it are merged as a patch of that list is
        if not isinstance(current, list) or not isinstance(values, list):
            continue
        if all(not isinstance(v, (dict, list)) for v in values):
            drop = {_hkey(v) for v in values}
            result[name] = [v for v in current if _hkey(v) not in drop]
        else:
            result[name] = _smp_list(current, values, _field(type_, name), depth + 1)
    orders = {k[len(_ORDER):]: patch.pop(k) for k in [k for k in patch if k.startswith(_ORDER)]}
    for name, order in orders.items():
        if not isinstance(order, list):
            raise _bad_request("invalid patch format of setElementOrder list")
        f = _field(type_, name)
        current = result.get(name)
        current_list = current if isinstance(current, list) else []
        if name in patch:
            value = patch.pop(name)
            if value is None:
                result.pop(name, None)
                continue
            if not isinstance(value, list):
                raise _bad_request("invalid patch format of setElementOrder list")
            _check_order(value, order, f.key)
            merged = (_smp_list(current_list, value, f, depth + 1) if f.merge and isinstance(current, list)
                      else [_strip(v, depth + 1) for v in value])
        else:
            merged = list(current_list)
        if not merged and name not in result:
            continue
        maps = any(isinstance(m, dict) for m in merged)
        for item in order:
            # validateMergeKeyInLists / the list's element kind: the order names each element as
            # the list holds it (an object with the merge key, or the scalar itself)
            if isinstance(item, list) or (maps and (not isinstance(item, dict) or f.key not in item)):
                raise _bad_request(f"map: {_go_value(item)} does not contain declared merge key: {f.key}"
                                   if maps else "invalid patch format of setElementOrder list")
        result[name] = _order(merged, order, current_list, f.key)
    for k, value in patch.items():
        if value is None:
            result.pop(k, None)
            continue
        f = _field(type_, k)
        current = result.get(k)
        # mergeMap recurses only where the object has a value of the same kind; anything else
        # is the patch's value, taken as is
        if isinstance(value, dict) and isinstance(current, dict):
            result[k] = _smp_map(current, value, f.type, depth + 1)
        elif isinstance(value, list) and isinstance(current, list) and f.merge:
            result[k] = _smp_list(current, value, f, depth + 1)
        else:
            result[k] = _strip(value, depth + 1)
    return result


def _check_order(patch_list: list[Any], order: list[Any], key: str) -> None:
    """``validatePatchWithSetOrderList``: the patch's items (but deletions and directives) are
    named by the ``$setElementOrder`` list, in its order."""
    def ident(item: Any) -> str:
        return _hkey(item.get(key) if key and isinstance(item, dict) else item)

    if not order or not patch_list:
        return
    items = [v for v in patch_list if not (isinstance(v, dict) and _DIRECTIVE in v)]
    at = 0
    for wanted in order:
        if at < len(items) and ident(items[at]) == ident(wanted):
            at += 1
    if at < len(items):
        raise _bad_request(f"The order in patch list:\n{_go_value(patch_list)}\n doesn't match $setElementOrder "
                           f"list:\n{_go_value(order)}\n")


def _strip(value: Any, depth: int) -> Any:
    """A patch value taken as is: nulls dropped (``discardNullValuesFromPatch``) and directives
    kept out of the object. The Go code copies them into the merged map and the server's typed
    decoding then drops them as unknown fields; this drops them at once."""
    if depth > MAX_DEPTH:
        raise _bad_request(f"the patch is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        return {k: _strip(v, depth + 1) for k, v in value.items() if v is not None and not k.startswith("$")}
    if isinstance(value, list):
        return [_strip(v, depth + 1) for v in value]
    return value


def _smp_list(original: list[Any], patch: list[Any], f: _Field, depth: int) -> list[Any]:
    """``mergeSlice``: a ``patchStrategy:"merge"`` list, by ``f.key`` for lists of objects."""
    if not original and not patch:
        return original
    kinds = {"map" if isinstance(v, dict) else "list" if isinstance(v, list) else "scalar"
             for v in [*original, *patch]}
    if "list" in kinds:
        raise _unprocessable("lists of lists are not supported")  # mergepatch.ErrNoListOfLists
    if len(kinds) > 1:
        raise _bad_request("the list mixes objects and scalars: types don't match")
    if kinds == {"scalar"}:
        seen: set[str] = set()
        merged: list[Any] = []
        for v in [*original, *patch]:
            if _hkey(v) not in seen:
                seen.add(_hkey(v))
                merged.append(v)
        return _order(merged, patch, original, "")
    if not f.key:
        raise _bad_request("cannot merge lists without merge key")
    replace = False
    plain: list[Obj] = []
    deleted: set[str] = set()
    for item in patch:
        if _DIRECTIVE not in item:
            if f.key not in item:
                raise _bad_request(f"map: {_go_value(item)} does not contain declared merge key: {f.key}")
            plain.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == "delete":
            if f.key not in item:
                raise _bad_request(f"map: {_go_value(item)} does not contain declared merge key: {f.key}")
            deleted.add(_hkey(item[f.key]))
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise _bad_request("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_request(f"unknown patch type: {_go_value(directive)} in map: {_go_value(item)}")
    if replace:
        return [_strip(item, depth + 1) for item in plain]
    result = [item for item in original if not (isinstance(item, dict) and _hkey(item.get(f.key)) in deleted)]
    where = {_hkey(item.get(f.key)): i for i, item in reversed(list(enumerate(result)))}
    for item in plain:
        at = where.get(_hkey(item[f.key]))
        if at is None:
            where[_hkey(item[f.key])] = len(result)
            result.append(_strip(item, depth + 1))  # appended as is (mergeSliceWithoutSpecialElements)
        else:
            result[at] = _smp_map(result[at], item, f.type, depth + 1)
    return _order(result, plain, original, f.key)


def _order(merged: list[Any], order: list[Any], server_order: list[Any], key: str) -> list[Any]:
    """``normalizeElementOrder``: the items named in ``order`` in its order, the others (only on
    the server) in the server's order, interleaved as ``mergeSortedSlice`` does."""
    def ident(item: Any) -> str:
        return _hkey(item.get(key) if key and isinstance(item, dict) else item)

    rank: dict[str, int] = {}
    for i, item in enumerate(order):
        rank.setdefault(ident(item), i)
    server_rank: dict[str, int] = {}
    for i, item in enumerate(server_order):
        server_rank.setdefault(ident(item), i)
    in_patch = sorted((m for m in merged if ident(m) in rank), key=lambda m: rank[ident(m)])
    server_only = sorted((m for m in merged if ident(m) not in rank),
                         key=lambda m: server_rank.get(ident(m), len(server_rank)))
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(in_patch):
        if j >= len(in_patch):
            out.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            out.append(in_patch[j])
            j += 1
        else:
            # the server's item first only when both are on the server and it comes first there;
            # otherwise the patch's (so new items lead, as kubectl patch --local shows)
            li, ri = server_rank.get(ident(server_only[i])), server_rank.get(ident(in_patch[j]))
            if li is not None and ri is not None and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(in_patch[j])
                j += 1
    return out


# ----------------------------------------------------------------- what a patch changed

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
"""The pod template annotation ``kubectl rollout restart`` sets (to the time, RFC 3339)."""
REVISION = "deployment.kubernetes.io/revision"
TEMPLATE_HASH = "pod-template-hash"
_IGNORED_METADATA = ("labels", "annotations", "resourceVersion", "managedFields", "generation", "uid",
                     "creationTimestamp", "selfLink")
"""Deployment metadata a patch may change without it being a change to the workload: labels and
annotations (``kubectl label``/``annotate``, the ``/metadata/annotations`` replace of ``rollout
undo``) are not modelled by the simulated cluster, and the rest is the server's own (a patch
of ``resourceVersion`` is a precondition, checked by the server, not here)."""
_PROBE_HANDLERS = ("httpGet", "grpc", "tcpSocket", "exec")


def _as_dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _int_field(value: Any, path: str, errors: list[FieldError], minimum: int, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append(FieldError("Invalid", path, "must be an integer", value))
        return default if default is not None else minimum
    if value < minimum:
        errors.append(FieldError("Invalid", path, f"must be greater than or equal to {minimum}", value))
    return value


def _check_containers(spec: Any, path: str, errors: list[FieldError]) -> None:
    """The shapes :func:`engine.kubectl.apiobjects.served` and the diff below rely on."""
    if not isinstance(spec, dict):
        errors.append(FieldError("Invalid", path, "must be an object", spec))
        return
    for list_key in ("containers", "initContainers", "ephemeralContainers"):
        containers = spec.get(list_key)
        if containers is None:
            continue
        if not isinstance(containers, list):
            errors.append(FieldError("Invalid", f"{path}.{list_key}", "must be a list", containers))
            continue
        for i, c in enumerate(containers):
            at = f"{path}.{list_key}[{i}]"
            if not isinstance(c, dict):
                errors.append(FieldError("Invalid", at, "must be an object", c))
                continue
            if not isinstance(c.get("name"), str) or not c.get("name"):
                errors.append(FieldError("Required", f"{at}.name", "must be a non-empty string"))
            for key in ("ports", "env", "envFrom", "volumeMounts"):
                items = c.get(key)
                if items is not None and (not isinstance(items, list) or not all(isinstance(x, dict) for x in items)):
                    errors.append(FieldError("Invalid", f"{at}.{key}", "must be a list of objects", items))
            envs = c.get("env")
            for env_i, env in enumerate(envs if isinstance(envs, list) else []):
                if isinstance(env, dict) and env.get("valueFrom") is not None and not isinstance(env["valueFrom"],
                                                                                                 dict):
                    errors.append(FieldError("Invalid", f"{at}.env[{env_i}].valueFrom", "must be an object",
                                                 env["valueFrom"]))
            for probe_key in ("livenessProbe", "readinessProbe", "startupProbe"):
                probe = c.get(probe_key)
                if probe is None:
                    continue
                if not isinstance(probe, dict):
                    errors.append(FieldError("Invalid", f"{at}.{probe_key}", "must be an object", probe))
                    continue
                for handler in _PROBE_HANDLERS:
                    if handler in probe and not isinstance(probe[handler], dict):
                        errors.append(FieldError("Invalid", f"{at}.{probe_key}.{handler}", "must be an object",
                                                 probe[handler]))
            resources = c.get("resources")
            if resources is not None and not isinstance(resources, dict):
                errors.append(FieldError("Invalid", f"{at}.resources", "must be an object", resources))


def _normalized_template(template: Any) -> Obj:
    """A pod template with the API's defaults filled in and without the labels and annotations
    a Deployment's controller adds to its ReplicaSets' copies (``pod-template-hash``, the
    revision), for comparing templates."""
    out: Obj = served({"kind": "ReplicaSet", "spec": {"template": copy.deepcopy(_as_dict(template))}})["spec"][
        "template"]
    meta = out.get("metadata")
    if isinstance(meta, dict):
        if isinstance(meta.get("labels"), dict):
            meta["labels"].pop(TEMPLATE_HASH, None)
        if isinstance(meta.get("annotations"), dict):
            meta["annotations"].pop(REVISION, None)
        for key in ("labels", "annotations"):
            if meta.get(key) in ({}, None):
                meta.pop(key, None)
        meta.pop("creationTimestamp", None)
        if not meta:
            out.pop("metadata")
    # A client that decoded the template into Go types and encoded it again (kubectl rollout undo
    # sends the ReplicaSet's template so) drops the zero values of omitempty fields and writes a
    # gRPC probe's defaulted empty service: compare those as the same template.
    for c in _as_dict(out.get("spec")).get("containers") or []:
        for name in ("readinessProbe", "livenessProbe", "startupProbe"):
            probe = c.get(name) if isinstance(c, dict) else None
            if not isinstance(probe, dict):
                continue
            if probe.get("initialDelaySeconds") == 0:
                probe.pop("initialDelaySeconds")
            grpc = probe.get("grpc")
            if isinstance(grpc, dict) and grpc.get("service") in ("", None):
                grpc.pop("service", None)
    return out


def _owned_by(rs: Mapping[str, Any], deployment: Mapping[str, Any]) -> bool:
    meta, owner_meta = _as_dict(rs.get("metadata")), _as_dict(deployment.get("metadata"))
    for ref in meta.get("ownerReferences") or []:
        if not isinstance(ref, dict) or ref.get("kind") != "Deployment" or ref.get("name") != owner_meta.get("name"):
            continue
        if ref.get("uid") and owner_meta.get("uid") and ref["uid"] != owner_meta["uid"]:
            continue
        return True
    return False


def _revision(rs: Mapping[str, Any]) -> int | None:
    text = _as_dict(_as_dict(rs.get("metadata")).get("annotations")).get(REVISION)
    try:
        return int(text) if isinstance(text, str) and text.isdigit() else None
    except ValueError:
        return None


def _env_map(container: Obj) -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    for env in container.get("env") or []:
        if isinstance(env, dict) and isinstance(env.get("name"), str):
            out[env["name"]] = env  # duplicates: the last one wins, as in the kubelet
    return out


def _quantity(value: Any, path: str, errors: list[FieldError]) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        errors.append(FieldError("Invalid", path, "must be a quantity", value))
        return None
    if isinstance(value, float) and not math.isfinite(value):
        errors.append(FieldError("Invalid", path, "must be a quantity", value))
        return None
    text = str(value)
    try:
        q = Quantity.parse(text)
    except (ValueError, ArithmeticError, OverflowError):
        errors.append(FieldError("Invalid", path, "quantities must match the regular expression "
                                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", value))
        return None
    if q.value < 0:
        errors.append(FieldError("Invalid", path, "must be greater than or equal to 0", value))
        return None
    return text


def _resources(raw: Any, path: str, errors: list[FieldError], other: list[str]) -> Resources:
    res = _as_dict(raw)
    lists: dict[str, ResourceList] = {}
    parsed: dict[str, dict[str, str]] = {}
    for kind in ("requests", "limits"):
        values = res.get(kind)
        if values is not None and not isinstance(values, dict):
            errors.append(FieldError("Invalid", f"{path}.{kind}", "must be a map of resource names to quantities",
                                     values))
            values = {}
        values = values or {}
        parsed[kind] = {}
        for name, value in values.items():
            q = _quantity(value, f"{path}.{kind}[{name}]", errors)
            if name in ("cpu", "memory"):
                if q is not None:
                    parsed[kind][name] = q
            else:
                other.append(f"{path}.{kind}[{name}]")
        lists[kind] = ResourceList(cpu=parsed[kind].get("cpu"), memory=parsed[kind].get("memory"))
    for key in res:
        if key not in ("requests", "limits"):
            other.append(f"{path}.{key}")
    # core/validation ValidateResourceRequirements: a request may not exceed its limit
    for name in ("cpu", "memory"):
        req, lim = parsed["requests"].get(name), parsed["limits"].get(name)
        if req is not None and lim is not None and Quantity.parse(req).value > Quantity.parse(lim).value:
            errors.append(FieldError("Invalid", f"{path}.requests", f"must be less than or equal to {name} limit "
                                     f"of {lim}", req))
    return Resources(requests=lists["requests"], limits=lists["limits"])


def _probe(raw: Any, container: Obj, path: str, errors: list[FieldError], liveness: bool) -> Probe | None:
    """A Kubernetes probe as :class:`engine.apps.model.Probe` (None when absent)."""
    if raw is None:
        return None
    probe = _as_dict(raw)
    handlers = [h for h in _PROBE_HANDLERS if probe.get(h) is not None]
    if not handlers:
        errors.append(FieldError("Required", path, "must specify a handler type"))
        return None
    if len(handlers) > 1:
        errors.append(FieldError("Forbidden", f"{path}.{handlers[1]}", "may not specify more than 1 handler type"))
        return None
    handler = handlers[0]
    action = _as_dict(probe[handler])
    port: int | None = None
    path_text: str | None = None
    if handler == "exec":
        command = action.get("command")
        if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
            errors.append(FieldError("Required", f"{path}.exec.command", "must be a non-empty list of strings"))
            return None
        # engine.apps.model.probe_spec writes an exec probe's check as ["/bin/sh", "-c", <check>]
        path_text = command[2] if len(command) == 3 and command[:2] == ["/bin/sh", "-c"] else shlex.join(command)
    else:
        raw_port = action.get("port")
        if isinstance(raw_port, str) and not raw_port.isdigit():
            named = [p.get("containerPort") for p in container.get("ports") or []
                     if isinstance(p, dict) and p.get("name") == raw_port]
            if not named or not isinstance(named[0], int):
                # Departure: kube-apiserver accepts any IANA_SVC_NAME (the kubelet fails the probe
                # later); the simulated cluster needs the number.
                errors.append(FieldError("Invalid", f"{path}.{handler}.port", "must name a port of the container",
                                         raw_port))
                return None
            raw_port = named[0]
        elif isinstance(raw_port, str):  # an IntOrString holding "8080" is a name, and not a valid one
            errors.append(FieldError("Invalid", f"{path}.{handler}.port", "must contain at least one letter (a-z)",
                                     raw_port))
            return None
        port = _int_field(raw_port, f"{path}.{handler}.port", errors, 1)
        if port > 65535:
            errors.append(FieldError("Invalid", f"{path}.{handler}.port", "must be between 1 and 65535, inclusive",
                                     port))
            return None
        if handler == "httpGet":
            p = action.get("path", "/")
            if not isinstance(p, str):
                errors.append(FieldError("Invalid", f"{path}.httpGet.path", "must be a string", p))
                return None
            path_text = p
    initial = _int_field(probe.get("initialDelaySeconds"), f"{path}.initialDelaySeconds", errors, 0, 0)
    period = _int_field(probe.get("periodSeconds"), f"{path}.periodSeconds", errors, 1, 10)
    timeout = _int_field(probe.get("timeoutSeconds"), f"{path}.timeoutSeconds", errors, 1, 1)
    failure = _int_field(probe.get("failureThreshold"), f"{path}.failureThreshold", errors, 1, 3)
    success = _int_field(probe.get("successThreshold"), f"{path}.successThreshold", errors, 1, 1)
    if liveness and success != 1:
        errors.append(FieldError("Invalid", f"{path}.successThreshold", "must be 1", success))
    if errors:
        return None
    kind: Literal["http", "grpc", "tcp", "exec"] = {"httpGet": "http", "grpc": "grpc", "tcpSocket": "tcp",
                                                   "exec": "exec"}[handler]  # type: ignore[assignment]
    return Probe(type=kind, port=port, path=path_text, initial_delay_s=initial, period_s=period, timeout_s=timeout,
                 failure_threshold=failure)


def _diff_keys(before: Obj, after: Obj, prefix: str, skip: Iterable[str] = ()) -> list[str]:
    skipped = set(skip)
    return [f"{prefix}.{k}" for k in sorted(set(before) | set(after))
            if k not in skipped and not _json_equal(before.get(k), after.get(k))]


def deployment_change(before: Mapping[str, Any], after: Mapping[str, Any],
                      replicasets: Sequence[Mapping[str, Any]]) -> DeploymentChange:
    """What a patch (or update) of a Deployment changed, as a :class:`DeploymentChange`.

    Args:
        before: the Deployment as stored (served form).
        after: the Deployment the write asks for (:func:`apply_patch`'s result, or a PUT body).
        replicasets: the namespace's ReplicaSets (those the Deployment owns, by
            ``ownerReferences`` kind, name and uid, are the revisions ``rollout undo`` returns to).

    Returns:
        The change in the app container (the first container of the pod template): ``image``,
        ``env`` (a value set, None when removed), ``resources``, ``readiness_probe`` and
        ``liveness_probe`` (:data:`KEEP` when unchanged), ``replicas``, ``restart`` (the
        template's ``kubectl.kubernetes.io/restartedAt`` annotation changed); ``rollback_to``,
        the revision of the owned ReplicaSet whose template the new template equals (ignoring
        ``pod-template-hash`` and the revision annotation, with the API's defaults filled in),
        in which case the template's differences are that rollback and not reported again;
        ``other``, the dotted paths of everything else that changed in ``spec`` (env vars
        from ``valueFrom`` references, ``envFrom``, other containers, ``nodeSelector``,
        ``strategy``...). Changes to the Deployment's labels and annotations, to ``status``
        (the server ignores a patch of it: that is the ``status`` subresource's) and to the
        server-managed metadata are not changes.

    Raises:
        ApiError: 422 Invalid, worded as kube-apiserver's validation words it, for a value the
        fields above cannot hold: ``spec.replicas`` not a non-negative integer, an image that
        is not a non-empty string, an env var without a name or with a non-string value, a
        quantity that does not parse or a request above its limit, a probe with no handler,
        two handlers or out-of-range numbers, and containers that are not objects.
    """
    name = str(_dig(after, "metadata", "name") or _dig(before, "metadata", "name") or "")
    errors: list[FieldError] = []
    other: list[str] = []
    spec_b, spec_a = _as_dict(before.get("spec")), after.get("spec")
    if not isinstance(spec_a, dict):
        raise invalid("Deployment", "apps", name, [FieldError("Required", "spec", "must be an object")])
    template_a = spec_a.get("template")
    if not isinstance(template_a, dict):
        raise invalid("Deployment", "apps", name, [FieldError("Required", "spec.template", "must be an object")])
    for key in ("metadata", "spec"):
        if template_a.get(key) is not None and not isinstance(template_a[key], dict):
            errors.append(FieldError("Invalid", f"spec.template.{key}", "must be an object", template_a[key]))
    _check_containers(template_a.get("spec") or {}, "spec.template.spec", errors)
    containers_a = _as_dict(template_a.get("spec")).get("containers")
    if not errors and not containers_a:
        errors.append(FieldError("Required", "spec.template.spec.containers", "must have at least one container"))
    strategy = spec_a.get("strategy")
    if strategy is not None and not isinstance(strategy, dict):
        errors.append(FieldError("Invalid", "spec.strategy", "must be an object", strategy))
    elif strategy is not None and strategy.get("rollingUpdate") is not None and not isinstance(
            strategy["rollingUpdate"], dict):
        errors.append(FieldError("Invalid", "spec.strategy.rollingUpdate", "must be an object",
                                 strategy["rollingUpdate"]))
    if errors:
        raise invalid("Deployment", "apps", name, errors)
    # The server defaults what it stores (SetDefaults_Deployment), so a PUT of a manifest that
    # leaves a default out (progressDeadlineSeconds, a probe's scheme...) changes nothing there.
    before, after = served({**before, "kind": "Deployment"}), served({**after, "kind": "Deployment"})
    spec_b, spec_a = _as_dict(before.get("spec")), after["spec"]
    template_a = spec_a["template"]

    replicas: int | None = None
    rep_b, rep_a = spec_b.get("replicas", 1), spec_a.get("replicas", 1)
    if not _json_equal(rep_b, rep_a):
        replicas = _int_field(rep_a, "spec.replicas", errors, 0)
    other += _diff_keys(spec_b, spec_a, "spec", skip=("replicas", "template"))
    meta_b, meta_a = _as_dict(before.get("metadata")), _as_dict(after.get("metadata"))
    other += _diff_keys(meta_b, meta_a, "metadata", skip=_IGNORED_METADATA)

    t_before, t_after = _normalized_template(spec_b.get("template")), _normalized_template(template_a)
    rollback_to: int | None = None
    if not _json_equal(t_before, t_after):
        for rs in replicasets:
            if not isinstance(rs, Mapping) or not _owned_by(rs, after):
                continue
            revision = _revision(rs)
            if revision is not None and _json_equal(_normalized_template(_dig(rs, "spec", "template")), t_after):
                rollback_to = revision
                break
    change: dict[str, Any] = {}
    if rollback_to is None and not _json_equal(t_before, t_after):
        change, template_other = _template_change(t_before, t_after, errors)
        other += template_other
    if errors:
        raise invalid("Deployment", "apps", name, errors)
    return DeploymentChange(deployment=name, replicas=replicas, rollback_to=rollback_to, other=tuple(other),
                            **change)


def _template_change(before: Obj, after: Obj, errors: list[FieldError]) -> tuple[dict[str, Any], list[str]]:
    other: list[str] = []
    change: dict[str, Any] = {}
    meta_b, meta_a = _as_dict(before.get("metadata")), _as_dict(after.get("metadata"))
    ann_b, ann_a = _as_dict(meta_b.get("annotations")), _as_dict(meta_a.get("annotations"))
    if not _json_equal(ann_b.get(RESTARTED_AT), ann_a.get(RESTARTED_AT)) and ann_a.get(RESTARTED_AT) is not None:
        change["restart"] = True
    other += [f"spec.template.metadata.annotations[{k}]" for k in sorted(set(ann_b) | set(ann_a))
              if k != RESTARTED_AT and not _json_equal(ann_b.get(k), ann_a.get(k))]
    if RESTARTED_AT in ann_b and RESTARTED_AT not in ann_a:
        other.append(f"spec.template.metadata.annotations[{RESTARTED_AT}]")
    other += _diff_keys(meta_b, meta_a, "spec.template.metadata", skip=("annotations",))
    pod_b, pod_a = _as_dict(before.get("spec")), _as_dict(after.get("spec"))
    other += _diff_keys(pod_b, pod_a, "spec.template.spec", skip=("containers",))
    cs_b, cs_a = pod_b.get("containers") or [], pod_a.get("containers") or []
    for i in range(1, max(len(cs_b), len(cs_a))):
        if i >= len(cs_b) or i >= len(cs_a) or not _json_equal(cs_b[i], cs_a[i]):
            other.append(f"spec.template.spec.containers[{i}]")
    c_b: Obj = cs_b[0] if cs_b else {}
    c_a: Obj = cs_a[0]
    at = "spec.template.spec.containers[0]"
    other += _diff_keys(c_b, c_a, at, skip=("image", "env", "resources", "readinessProbe", "livenessProbe"))
    if not _json_equal(c_b.get("image"), c_a.get("image")):
        image = c_a.get("image")
        if not isinstance(image, str) or not image.strip():
            errors.append(FieldError("Required", f"{at}.image", "must be a non-empty string"))
        else:
            change["image"] = image
    env = _env_change(c_b, c_a, at, errors, other)
    if env:
        change["env"] = env
    if not _json_equal(c_b.get("resources"), c_a.get("resources")):
        resource_other: list[str] = []
        new = _resources(c_a.get("resources"), f"{at}.resources", errors, resource_other)
        old_other: list[str] = []
        old = _resources(c_b.get("resources"), f"{at}.resources", [], old_other)
        if new != old:
            change["resources"] = new
        other += [p for p in resource_other
                  if p not in old_other or not _json_equal(_resource_at(c_b, p), _resource_at(c_a, p))]
        other += [p for p in old_other if p not in resource_other]
    for key, field_name, liveness in (("readinessProbe", "readiness_probe", False),
                                      ("livenessProbe", "liveness_probe", True)):
        if _json_equal(c_b.get(key), c_a.get(key)):
            continue
        probe_errors: list[FieldError] = []
        new_probe = _probe(c_a.get(key), c_a, f"{at}.{key}", probe_errors, liveness)
        errors += probe_errors
        old_probe = _probe(c_b.get(key), c_b, f"{at}.{key}", [], liveness)
        if probe_errors:
            continue
        if new_probe != old_probe:
            change[field_name] = new_probe
        else:  # the probe changed in a field the model has no place for (scheme, headers...)
            other.append(f"{at}.{key}")
    return change, other


def _resource_at(container: Obj, path: str) -> Any:
    # "...resources.limits[ephemeral-storage]" or "...resources.claims"
    tail = path.rsplit(".resources.", 1)[-1]
    res = _as_dict(container.get("resources"))
    if "[" in tail:
        kind, name = tail[:-1].split("[", 1)
        return _as_dict(res.get(kind)).get(name)
    return res.get(tail)


def _env_change(c_b: Obj, c_a: Obj, at: str, errors: list[FieldError],
                other: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for i, env in enumerate(c_a.get("env") or []):
        name = env.get("name")
        if not isinstance(name, str) or not name:
            errors.append(FieldError("Required", f"{at}.env[{i}].name", "must be a non-empty string"))
        value = env.get("value")
        if value is not None and not isinstance(value, str):
            errors.append(FieldError("Invalid", f"{at}.env[{i}].value", "must be a string", value))
        if value not in (None, "") and env.get("valueFrom") is not None:
            errors.append(FieldError("Invalid", f"{at}.env[{i}].valueFrom", "may not be specified when `value` "
                                     "is not empty", ""))
    if errors:
        return {}
    env_b, env_a = _env_map(c_b), _env_map(c_a)
    for name in [*env_b, *(n for n in env_a if n not in env_b)]:
        old, new = env_b.get(name), env_a.get(name)
        if old is not None and new is not None and _json_equal(old, new):
            continue
        if new is None:
            if old is not None and old.get("valueFrom") is not None:
                other.append(f"{at}.env[{name}]")
            else:
                out[name] = None
        elif new.get("valueFrom") is not None or (old is not None and old.get("valueFrom") is not None):
            other.append(f"{at}.env[{name}]")
        else:
            value = new.get("value") or ""
            if old is None or (old.get("value") or "") != value:
                out[name] = value
    if not _json_equal(c_b.get("envFrom"), c_a.get("envFrom")):
        other.append(f"{at}.envFrom")
    return out


# ----------------------------------------------------------------- nodes and services

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def node_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> NodeChange:
    """What a patch of a Node changed: ``kubectl cordon``/``uncordon`` and ``kubectl taint``.

    Args:
        before: the Node as stored.
        after: the Node the write asks for.

    Returns:
        The new ``spec.unschedulable`` (absent is False) when it changed, and the new
        ``spec.taints`` (``key``, ``value`` when set, ``effect``, ``timeAdded`` when set) when
        they changed. Changes to the Node's labels and annotations and to ``status`` (the
        ``status`` subresource's) are not changes.

    Raises:
        ApiError: 422 Invalid for ``unschedulable`` that is not a boolean, a taint without a
        key, with an effect other than ``NoSchedule``/``PreferNoSchedule``/``NoExecute``, or
        a duplicate ``key``+``effect`` (core/validation ``validateNodeTaints``), and for any
        other change to ``spec`` or to the Node's metadata (the simulated cluster does not
        model it; a real server would store it).
    """
    name = str(_dig(after, "metadata", "name") or _dig(before, "metadata", "name") or "")
    errors: list[FieldError] = []
    spec_b, spec_a = _as_dict(before.get("spec")), after.get("spec")
    if spec_a is not None and not isinstance(spec_a, dict):
        raise invalid("Node", "", name, [FieldError("Invalid", "spec", "must be an object", spec_a)])
    spec_a = spec_a or {}
    unschedulable: bool | None = None
    u_b, u_a = spec_b.get("unschedulable", False), spec_a.get("unschedulable", False)
    if not isinstance(u_a, bool):
        errors.append(FieldError("Invalid", "spec.unschedulable", "must be a boolean", u_a))
    elif u_a != u_b:
        unschedulable = u_a
    taints: tuple[Mapping[str, str], ...] | None = None
    t_b, t_a = spec_b.get("taints") or [], spec_a.get("taints") or []
    if not isinstance(t_a, list):
        errors.append(FieldError("Invalid", "spec.taints", "must be a list", t_a))
    elif not _json_equal(t_b, t_a):
        parsed: list[dict[str, str]] = []
        seen: set[tuple[str, str]] = set()
        for i, taint in enumerate(t_a):
            at = f"spec.taints[{i}]"
            if not isinstance(taint, dict):
                errors.append(FieldError("Invalid", at, "must be an object", taint))
                continue
            key, value, effect = taint.get("key"), taint.get("value", ""), taint.get("effect")
            if not isinstance(key, str) or not key:
                errors.append(FieldError("Required", f"{at}.key", "must be a non-empty string"))
                continue
            if not isinstance(value, str):
                errors.append(FieldError("Invalid", f"{at}.value", "must be a string", value))
                continue
            if effect not in _TAINT_EFFECTS:
                errors.append(FieldError("Unsupported", f"{at}.effect", "supported values: \"NoSchedule\", "
                                         "\"PreferNoSchedule\", \"NoExecute\"", effect))
                continue
            if (key, str(effect)) in seen:
                errors.append(FieldError("Invalid", f"{at}.effect",
                                         "taints must be unique by key and effect pair", effect))
                continue
            seen.add((key, str(effect)))
            extra = sorted(set(taint) - {"key", "value", "effect", "timeAdded"})
            if extra:
                errors.append(FieldError("Forbidden", f"{at}.{extra[0]}", "not a field of a taint"))
                continue
            item = {"key": key, "effect": str(effect)}
            if value:
                item["value"] = value
            if isinstance(taint.get("timeAdded"), str):
                item["timeAdded"] = taint["timeAdded"]
            parsed.append(item)
        taints = tuple(parsed)
    for path in _diff_keys(spec_b, spec_a, "spec", skip=("unschedulable", "taints")):
        errors.append(FieldError("Forbidden", path, "the simulated cluster does not model this change"))
    if errors:
        raise invalid("Node", "", name, errors)
    return NodeChange(node=name, unschedulable=unschedulable, taints=taints)


def service_change(before: Mapping[str, Any], after: Mapping[str, Any]
                   ) -> tuple[dict[str, str] | None, int | str | None]:
    """What a patch of a Service changed: its ``spec.selector`` and its port's ``targetPort``.

    Args:
        before: the Service as stored.
        after: the Service the write asks for.

    Returns:
        ``(selector, target_port)``: the new selector (``{}`` when removed) or None when
        unchanged; the new ``targetPort`` (a port number or a named container port) or None
        when unchanged. Changes to the Service's labels and annotations and to ``status`` are
        not changes.

    Raises:
        ApiError: 422 Invalid for a selector that is not a map of strings, a ``targetPort``
        out of range or not a port name, ports whose target ports change to different values,
        and any other change to ``spec`` (ports added or removed, ``type``, ``clusterIP``...):
        the simulated cluster models only these two.
    """
    name = str(_dig(after, "metadata", "name") or _dig(before, "metadata", "name") or "")
    errors: list[FieldError] = []
    spec_b, spec_a = _as_dict(before.get("spec")), after.get("spec")
    if not isinstance(spec_a, dict):
        raise invalid("Service", "", name, [FieldError("Required", "spec", "must be an object")])
    ports = spec_a.get("ports")
    if ports is not None and (not isinstance(ports, list) or not all(isinstance(p, dict) for p in ports)):
        raise invalid("Service", "", name, [FieldError("Invalid", "spec.ports", "must be a list of objects", ports)])
    # defaulted as the server stores it (SetDefaults_Service: protocol, targetPort, type...)
    spec_b = _as_dict(served({**before, "kind": "Service"}).get("spec"))
    spec_a = served({**after, "kind": "Service"})["spec"]
    selector: dict[str, str] | None = None
    sel_b, sel_a = spec_b.get("selector") or {}, spec_a.get("selector") or {}
    if not _json_equal(sel_b, sel_a):
        if not isinstance(sel_a, dict) or not all(isinstance(v, str) for v in sel_a.values()):
            errors.append(FieldError("Invalid", "spec.selector", "must be a map of label keys to string values",
                                     sel_a))
        else:
            selector = dict(sel_a)
    target: int | str | None = None
    ports_b, ports_a = spec_b.get("ports") or [], spec_a.get("ports") or []
    if len(ports_a) != len(ports_b):
        errors.append(FieldError("Forbidden", "spec.ports", "the simulated cluster does not model adding or "
                                 "removing a Service's ports"))
    else:
        targets: list[int | str] = []
        for i, (p_b, p_a) in enumerate(zip(ports_b, ports_a, strict=True)):
            at = f"spec.ports[{i}]"
            p_b = _as_dict(p_b)
            for path in _diff_keys(p_b, p_a, at, skip=("targetPort",)):
                errors.append(FieldError("Forbidden", path, "the simulated cluster does not model this change"))
            t_b, t_a = p_b.get("targetPort", p_b.get("port")), p_a.get("targetPort", p_a.get("port"))
            if _json_equal(t_b, t_a):
                continue
            if isinstance(t_a, int) and not isinstance(t_a, bool):
                if not 1 <= t_a <= 65535:
                    errors.append(FieldError("Invalid", f"{at}.targetPort", "must be between 1 and 65535, inclusive",
                                             t_a))
                    continue
            elif not isinstance(t_a, str) or not t_a or len(t_a) > 15 or not t_a.replace("-", "").isalnum():
                errors.append(FieldError("Invalid", f"{at}.targetPort", "must be a port number or an IANA_SVC_NAME",
                                         t_a))
                continue
            targets.append(t_a)
        if len({_hkey(t) for t in targets}) > 1:
            errors.append(FieldError("Forbidden", "spec.ports", "the simulated cluster moves all of a Service's "
                                     "ports to one target port at a time"))
        elif targets:
            target = targets[0]
    for path in _diff_keys(spec_b, spec_a, "spec", skip=("selector", "ports")):
        errors.append(FieldError("Forbidden", path, "the simulated cluster does not model this change"))
    if errors:
        raise invalid("Service", "", name, errors)
    return selector, target


def _replicas_only(kind: str, group: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> int | None:
    name = str(_dig(after, "metadata", "name") or _dig(before, "metadata", "name") or "")
    spec_b, spec_a = _as_dict(before.get("spec")), after.get("spec")
    if not isinstance(spec_a, dict):
        raise invalid(kind, group, name, [FieldError("Required", "spec", "must be an object")])
    errors: list[FieldError] = []
    replicas: int | None = None
    rep_b, rep_a = spec_b.get("replicas", 1), spec_a.get("replicas", 1)
    if not _json_equal(rep_b, rep_a):
        replicas = _int_field(rep_a, "spec.replicas", errors, 0)
    # a StatefulSet's template is compared as is: before and after are both in served form
    for path in _diff_keys(spec_b, spec_a, "spec", skip=("replicas",)):
        errors.append(FieldError("Forbidden", path, "the simulated cluster does not model this change"))
    if errors:
        raise invalid(kind, group, name, errors)
    return replicas


def statefulset_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> int | None:
    """The new ``spec.replicas`` of a patched StatefulSet (``kubectl scale sts``), None when unchanged.

    Labels, annotations and ``status`` are not changes.

    Raises:
        ApiError: 422 Invalid for replicas that are not a non-negative integer, and for any
        other change to ``spec`` (the simulated cluster only scales StatefulSets).
    """
    return _replicas_only("StatefulSet", "apps", before, after)


def scale_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> int | None:
    """The new ``spec.replicas`` of a patched ``autoscaling/v1`` Scale (the ``deployments/scale``
    and ``statefulsets/scale`` subresources ``kubectl scale`` patches), None when unchanged.

    Raises:
        ApiError: 422 Invalid for replicas that are not a non-negative integer, or another
        change to the Scale's ``spec``.
    """
    return _replicas_only("Scale", "autoscaling", before, after)


__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "KEEP",
    "MAX_DEPTH",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "SUPPORTED_PATCH_TYPES",
    "FieldError",
    "apply_patch",
    "decode_json",
    "deployment_change",
    "invalid",
    "node_change",
    "scale_change",
    "service_change",
    "statefulset_change",
    "unsupported_media_type",
]
