"""The gate's runner: the files every bundle carries (`argus gate --bundle DIR`), run there as scripts.

Nothing here imports argus, pydantic or any package beyond the standard library, torch and triton: the same
files run under the language server's gate and on a GPU machine that has only torch and triton. They import
each other as top-level modules (run.py's folder is on sys.path), so argus never imports them itself.
"""

# The files write_bundle copies into a bundle, next to the generated kernel.py and problem modules.
RUNNER_FILES = (
    "run.py",
    "gate_common.py",
    "gate_compile.py",
    "gate_correct.py",
    "gate_interpreter.py",
    "gate_profile.py",
)
