"""The LLM planner: asks a model served by Ollama (through the official `ollama` client) for the next action.

The answer is structured (LlmAnswer's JSON schema is passed as the chat `format`) and validated here: an answer
that is not JSON, fails the schema, names a skill the library does not hold or one that does not match at its
line, or repeats a proposal already tried, is sent back with the error and asked again, up to `retries` times.
After that `propose` returns None (the planner has nothing usable left; `last_error` says why), so the loop ends
with what it has kept. Model text only ever becomes a Proposal, which the loop parses, verifies and gates.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any, Literal

import httpx
import ollama
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from argus.agent import prompt
from argus.agent.plan import Proposal, State, Step
from argus.skills.cards import Card
from argus.skills.library import load_cards

DEFAULT_MODEL = "qwen2.5-coder:7b"
DEFAULT_HOST = "http://localhost:11434"
CONNECT_TIMEOUT_S = 5.0  # a host that drops packets should fail fast, not after the chat's long read timeout

log = logging.getLogger(__name__)


class PlannerUnavailable(Exception):
    """No Ollama server answers at the host, or it does not have the model: the message says what to do."""


class LlmAnswer(BaseModel):
    """What the model must answer: one action, and why."""

    model_config = ConfigDict(extra="ignore")  # a harmless extra key is not worth a retry

    action: Literal["skill", "source", "diff", "stop"] = Field(
        description="skill: apply a library skill at a line; source: the whole edited file; diff: a unified diff "
        "against the current file; stop: nothing worth trying is left"
    )
    skill: str | None = Field(None, description="the skill's id, from the cards listed; action skill only")
    line: int | None = Field(None, ge=1, description="1-based line the skill applies at; action skill only")
    source: str | None = Field(None, description="the whole edited Argus file; action source only")
    diff: str | None = Field(None, description="a unified diff against the current file; action diff only")
    rationale: str = Field("", description="one or two sentences: why this should be correct and faster")

    @model_validator(mode="after")
    def _fields_of_the_action(self) -> LlmAnswer:
        needed = {"skill": ("skill", "line"), "source": ("source",), "diff": ("diff",), "stop": ()}[self.action]
        missing = [name for name in needed if not getattr(self, name)]
        if missing:
            raise ValueError(f"action {self.action!r} needs {' and '.join(missing)}")
        return self


def answer_schema() -> dict[str, Any]:
    return LlmAnswer.model_json_schema()


class LlmPlanner:
    name = "llm"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        host: str | None = None,
        memory: Any = None,
        retries: int = 3,
        timeout_s: float = 120,
        cards: list[Card] | None = None,
    ) -> None:
        self.model = model or DEFAULT_MODEL
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self.memory = memory
        self.retries = retries
        self.cards = load_cards() if cards is None else cards
        self.client = ollama.Client(host=self.host, timeout=httpx.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S))
        self.timeout_s = timeout_s  # per chat request: a 7B model on a CPU takes tens of seconds per answer
        self.last_error: str | None = None  # why the last propose returned None, when it did
        self.attempts = 0  # chat requests made, retries included
        self._reachable = False

    def check_reachable(self) -> None:
        """Raises PlannerUnavailable unless the server answers and holds the model."""
        try:
            listed = self.client.list()
        except (ConnectionError, httpx.HTTPError) as e:
            raise PlannerUnavailable(self._no_server(e)) from None
        except ollama.ResponseError as e:
            raise PlannerUnavailable(f"the Ollama server at {self.host} answered {e}; {SEARCH_HINT}") from None
        names = {m.model for m in listed.models if m.model}
        if not any(same_model(self.model, n) for n in names):
            raise PlannerUnavailable(self._no_model())
        self._reachable = True

    def propose(self, state: State, history: Sequence[Step]) -> Proposal | None:
        if not self._reachable:
            self.check_reachable()
        self.last_error = None
        matches = prompt.skill_matches(state, self.cards)
        messages = prompt.build_messages(state, history, matches=matches, memory=self.memory)
        tried = failed_here(history)
        for attempt in range(self.retries + 1):
            content = self._chat(messages)
            try:
                answer = LlmAnswer.model_validate_json(content)
                proposal = self._proposal(answer, state, matches, tried)
            except (ValidationError, ValueError) as e:
                error = describe(e)
                log.info("llm answer %d malformed: %s", attempt + 1, error)
                messages = [*messages, {"role": "assistant", "content": content}, prompt.retry_message(error)]
                self.last_error = error
                continue
            return proposal
        log.warning("llm planner gives up after %d malformed answers: %s", self.retries + 1, self.last_error)
        return None

    def _chat(self, messages: list[dict[str, str]]) -> str:
        self.attempts += 1
        try:
            response = self.client.chat(
                model=self.model, messages=messages, format=answer_schema(), options={"temperature": 0}
            )
        except httpx.ReadTimeout:
            raise PlannerUnavailable(
                f"the Ollama server at {self.host} did not answer within {self.timeout_s:g} s (the model may still "
                f"be loading, or be too large for the machine): raise the timeout, pick a smaller --model, or "
                f"{SEARCH_HINT}"
            ) from None
        except (ConnectionError, httpx.HTTPError) as e:
            raise PlannerUnavailable(self._no_server(e)) from None
        except ollama.ResponseError as e:
            if e.status_code == 404:
                raise PlannerUnavailable(self._no_model()) from None
            raise PlannerUnavailable(f"the Ollama server at {self.host} answered {e}; {SEARCH_HINT}") from None
        return response.message.content or ""

    def _proposal(
        self, answer: LlmAnswer, state: State, matches: list[dict[str, Any]], tried: set[str]
    ) -> Proposal | None:
        if answer.action == "stop":
            return None
        if answer.action == "skill":
            check_skill(answer, state, matches, {c.id for c in self.cards})
            proposal = Proposal("skill", answer.rationale, skill=answer.skill, line=answer.line - 1)
        elif answer.action == "source":
            if answer.source.strip() == state.source.strip():
                raise ValueError("the source is unchanged: edit the kernel, or answer action 'stop'")
            proposal = Proposal("source", answer.rationale, source=answer.source)
        else:
            proposal = Proposal("diff", answer.rationale, diff=answer.diff)
        if proposal.key() in tried:
            raise ValueError("this exact proposal was already tried in this run and not kept: propose another")
        return proposal

    def _no_server(self, error: Exception) -> str:
        return (
            f"no Ollama server answers at {self.host} ({type(error).__name__}: {error}). Start one with "
            f"`ollama serve` (then `ollama pull {self.model}` if the model is not there yet), point --host or "
            f"OLLAMA_HOST at a running one, or {SEARCH_HINT}"
        )

    def _no_model(self) -> str:
        return (
            f"the Ollama server at {self.host} does not have the model {self.model!r}: run `ollama pull "
            f"{self.model}` (or pick a pulled one with --model), or {SEARCH_HINT}"
        )


SEARCH_HINT = "use `--planner search`, which needs nothing but the gate"


def failed_here(history: Sequence[Step]) -> set[str]:
    """Keys of the proposals that failed since the last kept step, i.e. at the current state: one that failed
    at an earlier state may work now."""
    keys: set[str] = set()
    for step in reversed(history):
        if step.kept:
            break
        keys.add(step.proposal.key())
    return keys


def same_model(wanted: str, listed: str) -> bool:
    """Ollama lists `name:tag`; a model asked for without a tag means `:latest`."""
    return wanted == listed or (":" not in wanted and listed == f"{wanted}:latest")


def check_skill(answer: LlmAnswer, state: State, matches: list[dict[str, Any]], library: set[str]) -> None:
    if answer.skill not in library:
        raise ValueError(f"skill {answer.skill!r} is not in the library; the skills that match here are: "
                         f"{', '.join(sorted({m['skill'] for m in matches})) or 'none'}")  # fmt: skip
    lines = len(state.source.splitlines())
    if not 1 <= answer.line <= lines:
        raise ValueError(f"line {answer.line} is outside the file (lines 1 to {lines})")
    here = [m for m in matches if m["skill"] == answer.skill]
    at_line = [m for m in here if answer.line in m["lines"]]
    if not at_line:
        where = ", ".join(str(n) for m in here for n in m["lines"]) or "nowhere in this kernel"
        raise ValueError(f"skill {answer.skill!r} does not match at line {answer.line}; it matches at: {where}")
    if not any(m["applicable"] for m in at_line):
        failed = at_line[0]["failed_precondition"]
        raise ValueError(f"skill {answer.skill!r} is not applicable at line {answer.line}: precondition "
                         f"{failed['name']} fails ({failed['found']})")  # fmt: skip


def describe(error: Exception) -> str:
    """The validation error in a few lines a model can act on (pydantic's own text names the field)."""
    if isinstance(error, ValidationError):
        parts = []
        for item in error.errors(include_url=False):
            where = ".".join(str(p) for p in item["loc"]) or "answer"
            parts.append(f"{where}: {item['msg']}")
        return "; ".join(parts)
    return str(error)
