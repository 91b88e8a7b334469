"""A certificate beside a study: read, checked against the study's parameters, and its proof stated."""

from __future__ import annotations

import time
from pathlib import Path

from ..params import Params
from .schema import Proof

__all__ = ["check_certifying", "check_proof", "read_certificate"]


def read_certificate(params: Params, certificate):
    """The census of `certificate` (a Census, or a file :meth:`slr_theory.certify.Census.save`
    wrote) and its source's name, refused unless it is about exactly `params`.

    Parameters
    ----------
    params : Params
    certificate : Census or path

    Returns
    -------
    tuple
        ``(census, source)``.

    Raises
    ------
    ValueError
        If the file cannot be read as a census, or the census is about other parameters.
    """
    from ..certify import Census

    source = "given"
    if not isinstance(certificate, Census):
        source = Path(certificate).name
        try:
            certificate = Census.load(certificate)
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            raise ValueError(
                f"`certificate` must be a census file (slr-theory certify --out), got "
                f"{str(certificate)!r} ({type(exc).__name__}: {exc})."
            ) from None
    if certificate.params != params:
        raise ValueError(
            f"`certificate` is about {certificate.params}, not the parameters {params}."
        )
    return certificate, source


def check_certifying(params: Params, certificate, certify) -> None:
    """Refuse, before any computing, a certificate for other parameters, `certify` with a
    certificate too, or `certify` for a model without rigorous enclosures.

    Parameters
    ----------
    params : Params
    certificate : Census or path or None
    certify : bool or path
        Whether the census is computed here (a path: where it is saved).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Naming `certificate` or `certify`.
    """
    if certify is not False and certify is not None:
        if certificate is not None:
            raise ValueError(
                "`certify` computes the certificate: give `certify` or `certificate`."
            )
        from ..certify import model_table

        model_table(params)
    if certificate is not None:
        read_certificate(params, certificate)


def check_proof(
    params: Params, certificate, points, source: str | None = None, jobs: int | None = None
) -> Proof:
    """Re-verify a census certificate for `params` and compare it with the search's `points`.

    Parameters
    ----------
    params : Params
        The certificate must be about exactly these parameters.
    certificate : Census or path
        A census, or a file :meth:`slr_theory.certify.Census.save` wrote.
    points : iterable
        The search's points (``overlaps``, ``index``, ``nullity``).
    source : str, optional
        The name the proof gives its certificate (default: the file's name).
    jobs : int, optional
        Worker processes of the check (:func:`slr_theory.certify.check_certificate`).

    Returns
    -------
    Proof

    Raises
    ------
    ValueError
        If the certificate cannot be read or is about other parameters.
    """
    from ..certify import check_certificate

    certificate, name = read_certificate(params, certificate)
    t0 = time.perf_counter()
    result = check_certificate(certificate, jobs=jobs)
    seconds = time.perf_counter() - t0
    agree = certificate.agreement(points)
    return Proof(
        source=name if source is None else source,
        checked=bool(result.ok),
        complete=bool(result.complete),
        points=len(certificate.points),
        indices=sum(q.index is not None for q in certificate.points),
        boxes=int(result.boxes),
        check_seconds=float(seconds),
        missing=agree["missing"],
        extra=agree["extra"],
        differ=agree["differ"],
        failures=list(result.failures),
    )
