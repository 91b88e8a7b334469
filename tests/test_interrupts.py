"""Ctrl-C held over a stretch (slr_theory/interrupts.py)."""

from __future__ import annotations

import os
import signal
import threading

from slr_theory.interrupts import interrupts_held


def test_a_sigint_within_the_block_is_noted_and_the_handler_comes_back():
    before = signal.getsignal(signal.SIGINT)
    with interrupts_held() as noted:
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
    assert noted == [signal.SIGINT, signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is before


def test_an_ignored_sigint_stays_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts_held() as noted:
            os.kill(os.getpid(), signal.SIGINT)
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert noted == []
    finally:
        signal.signal(signal.SIGINT, before)


def test_outside_the_main_thread_nothing_changes():
    seen = []

    def body():
        with interrupts_held() as noted:
            seen.append((noted, signal.getsignal(signal.SIGINT)))

    before = signal.getsignal(signal.SIGINT)
    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [([], before)]
