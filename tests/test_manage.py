"""manage.py leaves what a command loaded to the end of its process, not to the interpreter's collections."""

import gc
import sys

import manage


def test_a_command_freezes_what_it_loaded_for_the_exit(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["manage.py", "version"])
    gc.unfreeze()
    try:
        manage.main()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert capsys.readouterr().out.strip()  # the command ran: Django's version
