"""One frozen settings tree, built from layered sources.

Precedence (lowest first): defaults < user file < workspace `.lore.json`/`.lore.toml` <
`LORE_*` environment < command line < `initializationOptions`. Every option has one
camelCase name used in all layers. A bad value is reported once and the lower layer's value
is kept: a typo in a config file must never stop the sidecar.

Trust (DESIGN.md §7): a workspace file comes with a repository someone may have just cloned,
so it may only *narrow*. Options that choose where data or credentials go, what is read, or
what text reaches a prompt (`USER_ONLY`) are ignored there, with a warning `lore/status`
shows; options in `NARROW` are taken from it only when they restrict the value the other
layers chose (`watch: false`, a lower `maxFileBytes`, `distiller: "off"`); ranking knobs
(`WORKSPACE_OK`) it may set freely.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from lore_sidecar import settings_values as conv

EMBEDDERS = ("wordllama", "minilm", "none")
DISTILLER_MODES = ("auto", "llm", "extractive", "off")


@dataclass(frozen=True, slots=True)
class IndexSettings:
    watch: bool = True
    index_workspace: bool = True
    max_file_bytes: int = 1_000_000
    debounce_ms: int = 300
    link_roots: tuple[str, ...] = ()
    transcript_roots: tuple[str, ...] = ()
    embed_vendored: bool = False  # vendored/generated files get vectors too (else words only)


@dataclass(frozen=True, slots=True)
class RecallSettings:
    lexical_weight: float = 1.0
    vector_weight: float = 0.5
    rrf_k: int = 60
    recency_weight: float = 0.1
    recency_half_life_days: float = 180.0
    candidates: int = 50
    vector_floor: float = 0.3
    fusion: str = "auto"
    files_vector_weight: float = 0.67
    code_vector_weight: float = 3.0
    neighbours: int = 1  # the best message hit brings its turns before and after (more pushed direct hits out of the head)
    date_weight: float = 0.6
    when_weight: float = 0.25
    session_weight: float = 0.0  # a message's score moves this share of the way to its session's best candidate's
    late_weight: float = 0.5  # conversation kinds, when their model gives word pieces (`embedder = "minilm"`)
    files_late_weight: float = 1.5
    late_candidates: int = 30


@dataclass(frozen=True, slots=True)
class StoreSettings:
    writer_stale_ms: int = 5000
    apply_wait_ms: int = 2000
    read_wait_ms: int = 5000  # read-your-writes: how long a read waits for the index to hold a write
    allow_network_fs: bool = False
    backup_dir: str | None = None  # default: <store>/backups
    backup_keep: int = 7
    backup_interval_ms: int = 86_400_000  # 0: no scheduled backups
    backup_recall_events: bool = False
    dream_interval_ms: int = 86_400_000  # 0: no scheduled dream
    shared_url: str | None = None  # a team's PostgreSQL record (postgresql://...); None: this machine only
    shared_team: str = "default"
    share_messages: tuple[str, ...] = ()  # project names whose conversations the team record carries too


@dataclass(frozen=True, slots=True)
class MemorySettings:
    distill_min_messages: int = 5
    distill_min_tokens: int = 64
    distill_idle_ms: int = 2000
    distill_max_messages: int = 40
    tool_output_limit: int = 4000
    meta_threshold: int = 20
    meta_keep: int = 5
    curate_every: int = 3
    llm_model: str = "claude-haiku-4-5"
    llm_base_url: str | None = None
    llm_timeout_ms: int = 60_000
    llm_retries: int = 2
    llm_max_tokens: int = 2048


@dataclass(frozen=True, slots=True)
class AskSettings:
    """Codebase questions (`lore/ask`): the model, its window, and how it is kept."""
    provider: str = "anthropic"  # or "openai": any OpenAI-compatible /chat/completions
    model: str | None = None  # default: llmModel (anthropic); required for openai
    base_url: str | None = None  # default: llmBaseUrl (anthropic); required for openai
    window_tokens: int = 150_000
    max_iterations: int = 25
    max_parallel: int = 3
    deadline_ms: int = 60_000
    max_tokens: int = 2048
    preload: tuple[str, ...] = ()
    keep_warm_ms: int = 0  # 0: off
    keep_warm_idle_ms: int = 1_800_000


@dataclass(frozen=True, slots=True)
class Settings:
    store_dir: Path
    embedder: str = "wordllama"
    files_embedder: str = "minilm"  # "same": workspace files use `embedder` too
    embedder_dim: int = 256  # WordLlama's kept dimensions (Matryoshka: 64, 128 or 256)
    distiller: str = "auto"
    guidance: str | None = None
    hook_idle_ms: int = 600_000
    mcp_timeout_ms: int = 4000
    gateway_timeout_ms: int = 3000
    gateway_linger_ms: int = 300_000  # a gateway `run` started exits this long after its last run and answer
    min_layer0_tokens: int = 4_000  # context assembly: the raw window a move goes back to
    max_layer0_tokens: int = 60_000  # the raw window's cap (leaving L0 past it)
    target_cache_read_cost_per_turn: float = 0.0  # USD re-read per call; lowers the cap per model (0: off)
    throttle_usd_per_hour: float = 0.0  # a session's spend rate past which calls get an advisory delay (0: off)
    carry_harness_summary: bool = False  # context assembly: a harness's own compaction summary kept whole
    show_command_results: str = "auto"
    log_level: str = "WARNING"
    log_file: str | None = None
    # (option, where it came from, why it was ignored): shown by lore/status.
    ignored: tuple[tuple[str, str, str], ...] = ()
    index: IndexSettings = field(default_factory=IndexSettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    ask: AskSettings = field(default_factory=AskSettings)


# camelCase option name -> (converter, where it lands: (section or None, attribute))
OPTIONS: dict[str, tuple[Callable[[Any], Any], tuple[str | None, str]]] = {
    "storeDir": (conv.path, (None, "store_dir")),
    "embedder": (conv.choice(EMBEDDERS), (None, "embedder")),
    "filesEmbedder": (conv.choice((*EMBEDDERS, "same")), (None, "files_embedder")),
    "embedderDim": (conv.one_of((64, 128, 256)), (None, "embedder_dim")),
    "distiller": (conv.choice(DISTILLER_MODES), (None, "distiller")),
    "guidance": (conv.text, (None, "guidance")),
    "hookIdleMs": (conv.integer(1000, 86_400_000), (None, "hook_idle_ms")),
    "mcpTimeoutMs": (conv.integer(100, 600_000), (None, "mcp_timeout_ms")),
    "gatewayTimeoutMs": (conv.integer(50, 600_000), (None, "gateway_timeout_ms")),
    "gatewayLingerMs": (conv.integer(1000, 86_400_000), (None, "gateway_linger_ms")),
    "minLayer0Tokens": (conv.integer(1_000, 1_000_000), (None, "min_layer0_tokens")),
    "maxLayer0Tokens": (conv.integer(1_000, 2_000_000), (None, "max_layer0_tokens")),
    "targetCacheReadCostPerTurn": (conv.number(0, 100), (None, "target_cache_read_cost_per_turn")),
    "throttleUsdPerHour": (conv.number(0, 10_000), (None, "throttle_usd_per_hour")),
    "carryHarnessSummary": (conv.boolean, (None, "carry_harness_summary")),
    "showCommandResults": (conv.choice(("auto", "always", "never")), (None, "show_command_results")),
    "logLevel": (conv.level, (None, "log_level")),
    "logFile": (conv.path, (None, "log_file")),
    "watch": (conv.boolean, ("index", "watch")),
    "indexWorkspace": (conv.boolean, ("index", "index_workspace")),
    "maxFileBytes": (conv.integer(1, 1 << 30), ("index", "max_file_bytes")),
    "debounceMs": (conv.integer(0, 60_000), ("index", "debounce_ms")),
    "linkRoots": (conv.paths, ("index", "link_roots")),
    "transcriptRoots": (conv.paths, ("index", "transcript_roots")),
    "embedVendored": (conv.boolean, ("index", "embed_vendored")),
    "lexicalWeight": (conv.number(0, 100), ("recall", "lexical_weight")),
    "vectorWeight": (conv.number(0, 100), ("recall", "vector_weight")),
    "rrfK": (conv.integer(1, 10_000), ("recall", "rrf_k")),
    "recencyWeight": (conv.number(0, 100), ("recall", "recency_weight")),
    "recencyHalfLifeDays": (conv.number(0.001, 1e6), ("recall", "recency_half_life_days")),
    "recallCandidates": (conv.integer(1, 10_000), ("recall", "candidates")),
    "vectorFloor": (conv.number(-1, 1), ("recall", "vector_floor")),
    "fusion": (conv.choice(("auto", "backfill", "rrf")), ("recall", "fusion")),
    "filesVectorWeight": (conv.number(0, 100), ("recall", "files_vector_weight")),
    "codeVectorWeight": (conv.number(0, 100), ("recall", "code_vector_weight")),
    "neighbours": (conv.integer(0, 50), ("recall", "neighbours")),
    "dateWeight": (conv.number(0, 100), ("recall", "date_weight")),
    "whenWeight": (conv.number(0, 100), ("recall", "when_weight")),
    "sessionWeight": (conv.number(0, 100), ("recall", "session_weight")),
    "lateWeight": (conv.number(0, 100), ("recall", "late_weight")),
    "filesLateWeight": (conv.number(0, 100), ("recall", "files_late_weight")),
    "lateCandidates": (conv.integer(1, 1000), ("recall", "late_candidates")),
    "writerStaleMs": (conv.integer(500, 600_000), ("store", "writer_stale_ms")),
    "applyWaitMs": (conv.integer(0, 60_000), ("store", "apply_wait_ms")),
    "readWaitMs": (conv.integer(0, 60_000), ("store", "read_wait_ms")),
    "allowNetworkFs": (conv.boolean, ("store", "allow_network_fs")),
    "backupDir": (conv.path, ("store", "backup_dir")),
    "backupKeep": (conv.integer(1, 1000), ("store", "backup_keep")),
    "backupIntervalMs": (conv.integer(0, 30 * 86_400_000), ("store", "backup_interval_ms")),
    "backupRecallEvents": (conv.boolean, ("store", "backup_recall_events")),
    "dreamIntervalMs": (conv.integer(0, 30 * 86_400_000), ("store", "dream_interval_ms")),
    "sharedUrl": (conv.text, ("store", "shared_url")),
    "sharedTeam": (conv.text, ("store", "shared_team")),
    "shareMessages": (conv.names, ("store", "share_messages")),
    "distillMinMessages": (conv.integer(1, 10_000), ("memory", "distill_min_messages")),
    "distillMinTokens": (conv.integer(0, 1_000_000), ("memory", "distill_min_tokens")),
    "distillIdleMs": (conv.integer(0, 3_600_000), ("memory", "distill_idle_ms")),
    "distillMaxMessages": (conv.integer(1, 10_000), ("memory", "distill_max_messages")),
    "toolOutputLimit": (conv.integer(200, 1_000_000), ("memory", "tool_output_limit")),
    "metaThreshold": (conv.integer(2, 10_000), ("memory", "meta_threshold")),
    "metaKeep": (conv.integer(0, 10_000), ("memory", "meta_keep")),
    "curateEvery": (conv.integer(1, 10_000), ("memory", "curate_every")),
    "llmModel": (conv.text, ("memory", "llm_model")),
    "llmBaseUrl": (conv.text, ("memory", "llm_base_url")),
    "llmTimeoutMs": (conv.integer(100, 600_000), ("memory", "llm_timeout_ms")),
    "llmRetries": (conv.integer(0, 10), ("memory", "llm_retries")),
    "llmMaxTokens": (conv.integer(16, 64_000), ("memory", "llm_max_tokens")),
    "askProvider": (conv.choice(("anthropic", "openai")), ("ask", "provider")),
    "askModel": (conv.text, ("ask", "model")),
    "askBaseUrl": (conv.text, ("ask", "base_url")),
    "askWindowTokens": (conv.integer(2_000, 2_000_000), ("ask", "window_tokens")),
    "askMaxIterations": (conv.integer(1, 25), ("ask", "max_iterations")),
    "askMaxParallel": (conv.integer(1, 16), ("ask", "max_parallel")),
    "askDeadlineMs": (conv.integer(500, 600_000), ("ask", "deadline_ms")),
    "askMaxTokens": (conv.integer(64, 64_000), ("ask", "max_tokens")),
    "askPreload": (conv.globs, ("ask", "preload")),
    "askKeepWarmMs": (conv.integer(0, 3_600_000), ("ask", "keep_warm_ms")),
    "askKeepWarmIdleMs": (conv.integer(1_000, 86_400_000), ("ask", "keep_warm_idle_ms")),
}
ENV_PREFIX = "LORE_"

# Ranking and timing knobs a repository may set: they change no destination and read nothing.
WORKSPACE_OK = frozenset({
    "lexicalWeight", "vectorWeight", "rrfK", "recencyWeight", "recencyHalfLifeDays", "recallCandidates",
    "vectorFloor", "fusion", "filesVectorWeight", "codeVectorWeight", "neighbours", "dateWeight", "whenWeight",
    "sessionWeight", "lateWeight", "filesLateWeight", "lateCandidates", "debounceMs",
})
_DISTILLER_RANK = {"off": 0, "extractive": 1, "auto": 2, "llm": 2}
# Options a repository may only restrict: (the value so far, the repository's) -> narrower?
NARROW: dict[str, Callable[[Any, Any], bool]] = {
    "watch": lambda old, new: new is False or new == old,
    "indexWorkspace": lambda old, new: new is False or new == old,
    "embedVendored": lambda old, new: new is False or new == old,
    "maxFileBytes": lambda old, new: new <= old,
    "toolOutputLimit": lambda old, new: new <= old,
    "llmRetries": lambda old, new: new <= old,
    "llmMaxTokens": lambda old, new: new <= old,
    "askWindowTokens": lambda old, new: new <= old,
    "maxLayer0Tokens": lambda old, new: new <= old,
    "minLayer0Tokens": lambda old, new: new <= old,
    "targetCacheReadCostPerTurn": lambda old, new: new > 0 and (old == 0 or new <= old),
    "throttleUsdPerHour": lambda old, new: new > 0 and (old == 0 or new <= old),
    "askMaxIterations": lambda old, new: new <= old,
    "askMaxParallel": lambda old, new: new <= old,
    "askMaxTokens": lambda old, new: new <= old,
    "askKeepWarmMs": lambda old, new: new == 0 or new == old,
    "distiller": lambda old, new: _DISTILLER_RANK[new] < _DISTILLER_RANK[old] or new == old,
}
# Everything else is user-level only: endpoints, models, the store, link and transcript
# roots, log files, guidance text, the embedder, the distillation cadence, timeouts.
USER_ONLY = frozenset(OPTIONS) - WORKSPACE_OK - frozenset(NARROW)


def env_name(option: str) -> str:
    """`storeDir` -> `LORE_STORE_DIR`."""
    out = "".join("_" + c if c.isupper() else c.upper() for c in option)
    return ENV_PREFIX + out


def default_store_dir() -> Path:
    return Path(platformdirs.user_data_dir("lore", appauthor=False))


def user_config_file() -> Path:
    return Path(platformdirs.user_config_dir("lore", appauthor=False)) / "config.toml"


def _read_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        if not path.is_file():
            return {}
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode()) if path.suffix == ".toml" else json.loads(raw)
    except (OSError, ValueError) as exc:
        warnings.append(f"{path}: cannot read settings ({exc}); ignored")
        return {}
    if not isinstance(data, dict):
        warnings.append(f"{path}: settings must be an object; ignored")
        return {}
    return data


def _flatten(data: Mapping[str, Any]) -> dict[str, Any]:
    """Accept both flat keys and one level of sections (`{"recall": {"rrfK": 30}}`)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping) and key in ("index", "recall", "store", "memory", "ask"):
            flat.update(value)
        else:
            flat[key] = value
    return flat


def load_settings(
    *,
    workspace_root: Path | None = None,
    cli: Mapping[str, Any] | None = None,
    init_options: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    user_file: Path | None = None,
) -> tuple[Settings, list[str]]:
    """Merge every layer into one frozen `Settings`; returns it with the warnings to report."""
    env = os.environ if env is None else env
    warnings: list[str] = []
    layers: list[tuple[str, Mapping[str, Any]]] = []
    user_file = user_file if user_file is not None else user_config_file()
    layers.append((str(user_file), _flatten(_read_file(user_file, warnings))))
    narrowing: list[tuple[str, Mapping[str, Any]]] = []
    ignored: list[tuple[str, str, str]] = []
    if workspace_root is not None:
        for name in (".lore.json", ".lore.toml"):
            p = workspace_root / name
            values = _flatten(_read_file(p, warnings))
            for key in [k for k in values if k in USER_ONLY]:
                reason = "only user config, the environment, the command line or the client may set it"
                ignored.append((key, str(p), reason))
                warnings.append(f"{p}: {key!r} is ignored in a workspace file ({reason})")
            layers.append((str(p), {k: v for k, v in values.items() if k not in USER_ONLY and k not in NARROW}))
            narrowing.append((str(p), {k: v for k, v in values.items() if k in NARROW}))
    layers.append(("environment", {o: env[env_name(o)] for o in OPTIONS if env_name(o) in env}))
    layers.append(("command line", {k: v for k, v in (cli or {}).items() if v is not None}))
    layers.append(("initializationOptions", _flatten(init_options or {})))

    chosen: dict[str, Any] = {}
    for origin, values in layers:
        for key, raw in values.items():
            value = _convert(origin, key, raw, warnings)
            if value is not _BAD:
                chosen[key] = value
    # Last, and only where it restricts what the user and the client chose: the repository.
    for origin, values in narrowing:
        for key, raw in values.items():
            value = _convert(origin, key, raw, warnings)
            if value is _BAD:
                continue
            current = chosen.get(key, _default(key))
            if NARROW[key](current, value):
                chosen[key] = value
            else:
                reason = f"a workspace file may only narrow it (from {current!r}, not to {value!r})"
                ignored.append((key, origin, reason))
                warnings.append(f"{origin}: {key!r} is ignored: {reason}")
    return build(chosen, ignored=tuple(ignored)), warnings


_BAD = object()


def _convert(origin: str, key: str, raw: Any, warnings: list[str]) -> Any:
    if key not in OPTIONS:
        warnings.append(f"{origin}: unknown setting {key!r}; ignored")
        return _BAD
    try:
        return OPTIONS[key][0](raw)
    except (TypeError, ValueError) as exc:
        shown = repr(raw) if len(repr(raw)) <= 80 else repr(raw)[:80] + "…"
        warnings.append(f"{origin}: bad value for {key!r} ({shown}): {exc}; ignored")
        return _BAD


def _default(key: str) -> Any:
    section, attr = OPTIONS[key][1]
    holder = {"index": IndexSettings, "recall": RecallSettings, "store": StoreSettings,
              "memory": MemorySettings, "ask": AskSettings}.get(section or "", Settings)
    return {f.name: f.default for f in fields(holder)}[attr]


def build(chosen: Mapping[str, Any], *, ignored: tuple[tuple[str, str, str], ...] = ()) -> Settings:
    top: dict[str, Any] = {}
    sections: dict[str, dict[str, Any]] = {"index": {}, "recall": {}, "store": {}, "memory": {}, "ask": {}}
    for key, value in chosen.items():
        section, attr = OPTIONS[key][1]
        (sections[section] if section else top)[attr] = value
    top["store_dir"] = Path(top.get("store_dir") or default_store_dir())
    return Settings(
        index=IndexSettings(**sections["index"]),
        recall=RecallSettings(**sections["recall"]),
        store=StoreSettings(**sections["store"]),
        memory=MemorySettings(**sections["memory"]),
        ask=AskSettings(**sections["ask"]),
        ignored=ignored,
        **top,
    )
