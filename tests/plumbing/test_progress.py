import subprocess
import sys
from pathlib import Path

from plumbing.progress import progress_bar

ROOT = Path(__file__).resolve().parent.parent.parent

PIPED = """
import sys
from plumbing.progress import progress_bar
with progress_bar(10, "reading", unit="B") as bar:
    bar.update(10)
print(bar.disable, "tqdm" in sys.modules, "multiprocessing" in sys.modules)
"""


def test_a_bar_off_a_terminal_counts_nothing():
    with progress_bar(10, "reading", unit="B") as bar:  # pytest's captured stderr: not a terminal
        bar.update(10)
    assert bar.disable


def test_a_piped_command_never_imports_tqdm():
    """A command whose output is piped (a pipeline, a scheduler's log) draws no bar, so it need not import
    tqdm, whose default lock imports `multiprocessing` too: start-up a command saves."""
    piped = subprocess.run(
        [sys.executable, "-c", PIPED], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert piped.stdout.split() == ["True", "False", "False"]
