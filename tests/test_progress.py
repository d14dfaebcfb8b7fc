"""tfprof_nb._progress outside a notebook (the notebook side runs in a real kernel in
tests/analysis/test_interrupt.py)."""

import subprocess
import sys


def test_plain_process_is_no_notebook_and_never_imports_ipython():
    code = ("import sys; from tfprof_nb._progress import in_notebook, WorkProgress; "
            "print(in_notebook(), WorkProgress().enabled, 'IPython' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False", "False"]


def test_ipython_shell_without_a_kernel_is_no_notebook():
    code = ("import sys; from IPython.testing.globalipapp import start_ipython; "
            "start_ipython(); from tfprof_nb._progress import in_notebook; "
            "print('IPython' in sys.modules, in_notebook())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[-2:] == ["True", "False"]
