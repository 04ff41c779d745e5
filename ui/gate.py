r"""The one gate between the app's pages and the library's private computations.

Every private computation of every page -- a release, a private choice of the length scale, a private discovery of
bounds or categories, a private k-means, a DPGM run, a private two-sample test -- goes through
:func:`run_private`, which, in this order,

1. settles the **public inputs** of the run: the number of rows is public under replace-one
   (:class:`PublicRows` with ``how="public"``); under add/remove it is a *declared* number or a *privately counted*
   one (:func:`row_count`: a Laplace count charged once per dataset and session), never ``len(private rows)``;
2. computes the **taint**: the reasons why the run would not be differentially private, from the session's typed
   facts (:func:`taint_reasons`: a seeded replay, a length scale, schema or scaling read off the private rows, an ε
   taken from a planning run on the private rows);
3. checks the **budget** of the ledger of these individuals for this run's charges; a run beyond it goes ahead only
   with the over-budget permission of *this page*, which is consumed by the run (:func:`over_budget_checkbox`);
4. **charges the ledger before any private row is read** (never for a tainted run, which is counted as not
   private instead);
5. runs the computation and stamps a tainted result NOT private, with the reasons, in every file it exports.

Pages and other UI modules never add to a ledger, never call a private mechanism of the library themselves and never
pass a private row count as "declared": ``tests/app/test_gate_structure.py`` checks it on the source.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import streamlit as st

from dpkme.privacy.accounting import BudgetLedger, PrivacyCharge
from dpkme.privacy.counting import PrivateRowCount, private_row_count
from dpkme.privacy.leaks import mark_not_private
from dpkme.privacy.spec import NeighbouringRelation

from . import noise as N
from . import state as S

__all__ = [
    "COUNT_EPSILON",
    "EPSILON_TAINT",
    "BudgetExceeded",
    "GatedRun",
    "PublicRows",
    "RunInputs",
    "allow_over_key",
    "mark_epsilon_from_private_planning",
    "over_budget_checkbox",
    "row_count",
    "run_private",
    "taint_reasons",
]

T = TypeVar("T")

#: ε of the private row count under add/remove (a public constant; charged once per dataset and session).
COUNT_EPSILON = 0.05
#: Session key: the ε read off a planning run on the private rows, ``{"epsilon": float, "reason": str}``.
EPSILON_TAINT = "_epsilon_taint"
#: Session key: privately counted row counts, ``{dataset key: PrivateRowCount}`` (released values: reusable).
ROW_COUNTS = "_row_counts"
#: Session key: ``{page: n}``, the number of over-budget permissions this page has consumed (the widget key's suffix).
_OVER_USED = "_over_budget_used"
#: Session key: the notes gathered for the next page run (shown, then cleared).
NOTES = "_gate_notes"

EPSILON_PROBLEM = ("ε = {eps:g} was taken from an ε-explorer run on the PRIVATE rows (a data-dependent choice that no "
                   "ledger accounts for; choose ε from public or simulated planning data, or type it yourself)")


class BudgetExceeded(ValueError):
    """The run would take the ledger beyond the user's total budget (and this page gave no permission)."""


@dataclass(frozen=True)
class PublicRows:
    """The number of rows a private computation may use, and how it became public.

    Parameters
    ----------
    n : int
        The number of rows.
    relation : NeighbouringRelation
        The neighbouring relation of the run.
    how : {"public", "declared", "private count", "not private"}
        ``"public"`` under replace-one (neighbours have the same size), ``"declared"`` by the owner from public
        knowledge, ``"private count"`` released by the Laplace mechanism (:attr:`count`), ``"not private"`` the
        exact count used by a run that is not private anyway (never in a file labelled private).
    count : PrivateRowCount, optional
        The private count, when ``how == "private count"``.
    """

    n: int
    relation: NeighbouringRelation
    how: str
    count: PrivateRowCount | None = None

    def words(self) -> str:
        """How N became public, for captions and exported files."""
        if self.how == "public":
            return f"N = {self.n:,}, public under replace-one (neighbouring tables have the same size)"
        if self.how == "declared":
            return f"N = {self.n:,}, declared by the owner from public knowledge"
        if self.how == "not private":
            return f"N = {self.n:,}, the exact count of a run that is NOT private"
        eps = self.count.charge.epsilon if self.count is not None else COUNT_EPSILON
        return f"N̂ = {self.n:,}, counted privately (Laplace, ε = {eps:g}, add/remove) — not the exact row count"


@dataclass(frozen=True)
class RunInputs:
    """What a gated computation receives: the data to read and the run's public facts.

    Parameters
    ----------
    ds : Dataset
        The data (its private rows are read only inside the computation).
    rows : PublicRows
        The number of rows the computation may use.
    private : bool
        Whether the run is differentially private (no taint).
    reasons : tuple of str
        Why it is not, if not.
    run_id : str
        The run's id (also in its charges' details).
    """

    ds: S.Dataset
    rows: PublicRows
    private: bool
    reasons: tuple[str, ...]
    run_id: str


@dataclass(frozen=True)
class GatedRun(Generic[T]):
    """The outcome of :func:`run_private`.

    Parameters
    ----------
    result : object
        What the computation returned (stamped not private when tainted).
    charges : tuple of PrivacyCharge
        The charges put in the ledger for this run (empty for a tainted run or one that spends nothing).
    private : bool
        Whether the run is differentially private.
    reasons : tuple of str
        Why it is not, if not.
    note : str or None
        The over-budget note, when the page's permission let it go beyond the budget.
    rows : PublicRows
        The public number of rows it used.
    run_id : str
        The run's id.
    """

    result: T
    charges: tuple[PrivacyCharge, ...]
    private: bool
    reasons: tuple[str, ...]
    note: str | None
    rows: PublicRows
    run_id: str


# ----------------------------------------------------------------------------------------------- taint
def mark_epsilon_from_private_planning(eps: float) -> None:
    """Record that the session's ε was taken from a planning run on the private rows (the explorer's "Use ε")."""
    st.session_state[EPSILON_TAINT] = {"epsilon": float(eps), "reason": EPSILON_PROBLEM.format(eps=float(eps))}


def _epsilon_problem() -> str | None:
    taint = st.session_state.get(EPSILON_TAINT)
    if not taint:
        return None
    current = S.epsilon()
    if abs(current - float(taint["epsilon"])) <= 1e-12 * max(1.0, abs(current)):
        return str(taint["reason"])
    return None


def taint_reasons(*, noise_source: str | None, ds: S.Dataset | None, uses_kernel: bool = True,
                  uses_epsilon: bool = True) -> list[str]:
    """Why a run with these settings would NOT be differentially private (empty: it would be).

    The one place that reads the session's data-dependence facts: a seeded replay, a length scale read off the
    private rows (when the run uses the session's kernel), a schema or scaling read off them, and an ε taken from
    a planning run on the private rows (when the run uses the session's ε).

    Parameters
    ----------
    noise_source : str or None
        The run's noise source (``None``: the run draws no noise of its own).
    ds : Dataset or None
        The data it reads (default: the current dataset).
    uses_kernel : bool, default True
        Whether the run uses the session's kernel length scale.
    uses_epsilon : bool, default True
        Whether the run uses the session's ε.

    Returns
    -------
    list of str
    """
    out = list(N.privacy_problems(noise_source=noise_source, kernel=uses_kernel, dataset=ds))
    eps_problem = _epsilon_problem() if uses_epsilon else None
    if eps_problem:
        out.append(eps_problem)
    return out


# ----------------------------------------------------------------------------------------------- permission
def allow_over_key(page: str) -> str:
    """The widget key of ``page``'s over-budget permission for its next run (a new key after each use)."""
    used = st.session_state.get(_OVER_USED, {}).get(page, 0)
    return f"gate.allow_over.{page}.{used}"


def over_budget_checkbox(page: str, *, label: str = "Allow exceeding the budget for the next run (teaching)") -> bool:
    """The page's own over-budget permission: scoped to this page and consumed by its next run that needs it.

    Parameters
    ----------
    page : str
        The page's id (e.g. ``"release"``, ``"clustering"``).
    label : str
        The checkbox's label.

    Returns
    -------
    bool
        Whether it is ticked.
    """
    return bool(st.checkbox(label, key=allow_over_key(page),
                            help="For teaching only: the next run on this page may go beyond the budget; it is "
                                 "recorded as over budget. The permission is used up by that run and applies to "
                                 "this page only."))


def _permission(page: str) -> bool:
    return bool(st.session_state.get(allow_over_key(page)))


def _consume_permission(page: str) -> None:
    used = st.session_state.setdefault(_OVER_USED, {})
    used[page] = used.get(page, 0) + 1


# ----------------------------------------------------------------------------------------------- rows
def row_count(ds: S.Dataset, *, relation: NeighbouringRelation, declared: int | None = None,
              page: str = "data", ledger: BudgetLedger | None = None) -> PublicRows:
    """The number of rows a run may use under ``relation``.

    Replace-one: ``ds.n`` (public). Add/remove: ``declared`` if the owner declared it, else a Laplace count with
    :data:`COUNT_EPSILON` (:func:`dpkme.privacy.counting.private_row_count`), made once per dataset and session --
    itself a gated run: budget-checked and charged before the rows are counted.

    Parameters
    ----------
    ds : Dataset
        The data.
    relation : NeighbouringRelation
        The neighbouring relation of the run that needs N.
    declared : int, optional
        A size the owner declares from public knowledge (add/remove only).
    page : str
        The page asking (its over-budget permission applies to the count).
    ledger : BudgetLedger, optional
        The ledger to charge (default: the ledger of ``ds``'s individuals).

    Returns
    -------
    PublicRows
    """
    relation = NeighbouringRelation.parse(relation)
    if relation.n_is_public:
        return PublicRows(n=int(ds.n), relation=relation, how="public")
    if declared is not None:
        return PublicRows(n=int(declared), relation=relation, how="declared")
    cache: dict[str, PrivateRowCount] = st.session_state.setdefault(ROW_COUNTS, {})
    known = cache.get(ds.key)
    if known is not None:
        return PublicRows(n=known.value, relation=relation, how="private count", count=known)
    led = S.ledger_for(ds) if ledger is None else ledger
    template = private_row_count_charge(ds)
    note = _check_budget(led, [template], page=page)
    led.add(template)                                        # charged before the rows are counted
    counted = private_row_count(n_rows=int(ds.n), epsilon=COUNT_EPSILON,
                                label=template.label)
    counted = PrivateRowCount(value=counted.value, scale=counted.scale, charge=template)
    cache[ds.key] = counted
    if note:
        st.session_state.setdefault(NOTES, []).append(note)
    return PublicRows(n=counted.value, relation=relation, how="private count", count=counted)


def private_row_count_charge(ds: S.Dataset) -> PrivacyCharge:
    """The charge of the private row count of ``ds`` (before it is made)."""
    from dpkme.privacy.accounting import laplace_charge

    return laplace_charge(f"private row count of {ds.name}", epsilon=COUNT_EPSILON,
                          details={"mechanism": "private-row-count"}).with_(
        relation=NeighbouringRelation.ADD_REMOVE, parts=(S.PART_PRIVATE,))


# ----------------------------------------------------------------------------------------------- budget
def _check_budget(led: BudgetLedger, charges: Sequence[PrivacyCharge], *, page: str) -> str | None:
    """None if ``charges`` fit the budget; the over-budget note if the page's permission lets them go beyond it."""
    message = _over_message(led, charges)
    return _permit(page, [message] if message else [])


def _permit(page: str, messages: Sequence[str]) -> str | None:
    """None if nothing is over budget; else the note of a run the page's permission lets go beyond it (the
    permission is used up once for the whole run), or BudgetExceeded."""
    if not messages:
        return None
    if not _permission(page):
        raise BudgetExceeded(messages[0])
    _consume_permission(page)
    return "Budget exceeded: " + messages[0]


def _over_message(led: BudgetLedger, charges: Sequence[PrivacyCharge]) -> str | None:
    """Why ``charges`` would take ``led`` beyond its budget, or None if they fit."""
    if not charges:
        return None
    trial = BudgetLedger(epsilon_budget=led.epsilon_budget, delta_budget=led.delta_budget, partition=led.partition)
    for c in led.all_charges:
        trial.add(c)
    for c in charges:
        trial.add(c)
    if not trial.exceeds_budget():
        return None
    eps_b, delta_b = S.budget()
    eps = sum(c.epsilon * c.count for c in charges)
    msg = (f"this run (ε = {eps:g} in {len(charges)} charge{'s' if len(charges) > 1 else ''}) would take the total "
           f"privacy loss on this data beyond your budget of ε = {eps_b:g}, δ = {S.fmt_delta(delta_b)} under every "
           "accountant (basic, RDP, PLD). Lower ε, raise the budget on the Budget ledger page, or tick 'Allow "
           "exceeding the budget for the next run' on this page.")
    return msg


# ----------------------------------------------------------------------------------------------- the gate
def run_private(*, page: str, ds: S.Dataset, charges: Callable[[PublicRows], Sequence[PrivacyCharge]],
                compute: Callable[[RunInputs], T], noise_source: str | None,
                relation: NeighbouringRelation = NeighbouringRelation.REPLACE_ONE, declared_n: int | None = None,
                uses_kernel: bool = True, uses_epsilon: bool = True,
                parts: tuple[str, ...] | None = (S.PART_PRIVATE,), ledger_key: str | None = None,
                ledger_name: str | None = None, extra_reasons: Sequence[str] = (),
                ledgers_by_part: Mapping[str, tuple[str, str]] | None = None) -> GatedRun[T]:
    """Run one private computation of a page: public inputs, taint, budget, charge, then the private rows.

    Parameters
    ----------
    page : str
        The page's id; its own over-budget permission (:func:`over_budget_checkbox`) is the only one that applies.
    ds : Dataset
        The data the computation reads.
    charges : callable
        ``charges(rows)`` -> the library's charges of the run from its public inputs (``rows``: the public N),
        computed before any private row is read. An empty sequence: the run spends nothing.
    compute : callable
        ``compute(inputs)`` -> the result; the only code that reads the private rows.
    noise_source : str or None
        The run's noise source (a seeded replay is not private).
    relation : NeighbouringRelation, default replace-one
        The run's neighbouring relation (add/remove: N is declared or privately counted).
    declared_n : int, optional
        A public size declared by the owner (add/remove only).
    uses_kernel, uses_epsilon : bool, default True
        Whether the run uses the session's kernel length scale and ε (their taint applies).
    parts : tuple of str or None
        The parts of the individuals the run reads (parallel composition), stamped on every charge; None keeps
        each charge's own parts (e.g. one part per holder of a two-sample test).
    ledger_key : str, optional
        The individuals charged when they are not ``ds``'s (a two-sample lab case, a pair of uploads): their
        ledger (:func:`ui.state.ledger_for_key`) is charged and their not-private runs counted.
    ledger_name : str, optional
        The name shown for that ledger on the Budget ledger page.
    extra_reasons : sequence of str
        Page-specific reasons why this run is not private.
    ledgers_by_part : mapping, optional
        ``{part: (ledger key, name)}`` when the run reads several groups of individuals that have ledgers of
        their own (e.g. two uploaded samples): a charge that reads one of these parts goes to that part's ledger;
        a charge that declares none of them goes to every one of them. Replaces ``ledger_key``.

    Returns
    -------
    GatedRun

    Raises
    ------
    BudgetExceeded
        If the run would exceed the budget and this page gave no permission (nothing is charged or read).
    """
    reasons = tuple(taint_reasons(noise_source=noise_source, ds=ds, uses_kernel=uses_kernel,
                                  uses_epsilon=uses_epsilon)) + tuple(extra_reasons)
    private = not reasons
    own = (ledger_key is None and not ledgers_by_part) or ledger_key == ds.data_key
    led = S.ledger_for(ds) if own else S.ledger_for_key(str(ledger_key), ledger_name or str(ledger_key)) \
        if ledger_key is not None else None
    run_id = uuid.uuid4().hex
    if private:
        rows = row_count(ds, relation=relation, declared=declared_n, page=page,
                         ledger=led if led is not None else S.ledger_for(ds))
    else:     # not private: nothing is charged; N is the owner's own count (the result is labelled NOT private)
        rows = PublicRows(n=int(ds.n), relation=NeighbouringRelation.parse(relation),
                          how="public" if NeighbouringRelation.parse(relation).n_is_public else "not private")
    stamped: list[PrivacyCharge] = []
    note = None
    if private:
        for c in charges(rows):
            if c.relation is not None and c.relation is not rows.relation:
                raise ValueError(f"the charge {c.label!r} is for {c.relation.value} neighbours but this run is "
                                 f"{rows.relation.value}; a guarantee for one relation does not compose with the "
                                 "other.")
            stamped.append(c.renewed(relation=rows.relation, parts=tuple(parts) if parts is not None else c.parts,
                                     details={**c.details, "run_id": run_id, "page": page,
                                              "noise_source": noise_source}))
        routed: list[tuple[BudgetLedger, list[PrivacyCharge]]] = []
        if ledgers_by_part:
            for part, (key, name) in ledgers_by_part.items():
                # in the target ledger the charge reads that ledger's people, any of its rows: no part of its split
                # (the routing part is another split's: composing it in parallel there would be wrong)
                mine = [c.with_(parts=()) for c in stamped if part in c.parts or not set(c.parts) & set(ledgers_by_part)]
                if mine:
                    routed.append((S.ledger_for_key(key, name), mine))
        else:
            assert led is not None
            routed.append((led, stamped))
        over = [_over_message(target, mine) for target, mine in routed]
        note = _permit(page, [m for m in over if m])
        for target, mine in routed:                            # charged before the private rows are read
            for c in mine:
                target.add(c)
        if stamped and own:
            S.lock_public_subset(ds)
    else:
        counts = st.session_state.setdefault(S.NONPRIVATE, {})
        for key in ([ds.data_key] if own else [str(ledger_key)] if ledger_key is not None
                    else [k for k, _ in (ledgers_by_part or {}).values()]):
            counts[key] = counts.get(key, 0) + 1
    notes = st.session_state.pop(NOTES, [])
    if notes and note is None:
        note = notes[0]
    result = compute(RunInputs(ds=ds, rows=rows, private=private, reasons=reasons, run_id=run_id))
    if reasons and isinstance(getattr(result, "params", None), dict) and getattr(result, "PARAMS_ARE_METADATA", True):
        mark_not_private(result, list(reasons), warn=False)
    return GatedRun(result=result, charges=tuple(stamped), private=private, reasons=reasons, note=note, rows=rows,
                    run_id=run_id)
