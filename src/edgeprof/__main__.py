import os
import sys

# ``python -m edgeprof`` put the current folder first on sys.path: nothing more is imported from there (edgeprof's
# own modules are found through the package, wherever it lives; the children it starts are isolated anyway)
if sys.path and not sys.flags.isolated and not getattr(sys.flags, "safe_path", False):
    try:
        if sys.path[0] in ("", ".") or os.path.samefile(sys.path[0], os.getcwd()):
            del sys.path[0]
    except OSError:
        pass

from .cli import main  # (restarts the program first when a library search path names the working folder)

main()
