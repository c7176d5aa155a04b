//! How Python code is started: `python3 -c BOOTSTRAP` with the code on standard input,
//! where the bootstrap hooks matplotlib's `pyplot.show()` to save each open figure as a
//! PNG in the output folder (the Python runtime's preamble does the same), then runs the
//! code as `python3 -` would.
//!
//! Why a bootstrap rather than the Python runtime's preamble written above the code: a
//! preamble moves every line of the code down, so the line numbers of a traceback — what
//! the model reads to fix its code — would be off, and a `from __future__` import, which
//! must come first, would fail. The bootstrap compiles the code on its own as `<stdin>`,
//! runs it in `__main__` (so pickling, `if __name__ == "__main__"` and `sys.argv[0] == "-"`
//! are as with `python3 -`) and prints an uncaught exception without its own frame: what
//! the code prints, its exit code and its tracebacks are those of `python3 -`.
//!
//! And why a hook on import rather than importing matplotlib first: importing it takes a
//! good part of a second, which every run would pay, also the many that never draw. The
//! hook waits for the code to import `matplotlib.pyplot` and only then replaces `show`;
//! `MPLBACKEND=Agg` (set with it) keeps pyplot from looking for a display the sandbox has
//! not got. A machine without matplotlib never loads it.

/// The program `python3 -c` runs: the output folder is `COWORK_OUTPUT_DIR`; without it no
/// hook is set.
pub(super) const BOOTSTRAP: &str = r#"
def _cowork_main():
    import os, sys, __main__
    folder = os.environ.get("COWORK_OUTPUT_DIR")

    def patch(pyplot):
        count = [0]
        def show(*args, **kwargs):
            for number in pyplot.get_fignums():
                name = "figure_%03d.png" % count[0]
                count[0] += 1
                pyplot.figure(number).savefig(os.path.join(folder, name), dpi=100, bbox_inches="tight")
            pyplot.close("all")
        pyplot.show = show

    class Hook(object):
        def find_spec(self, name, path=None, target=None):
            if name != "matplotlib.pyplot":
                return None
            sys.meta_path.remove(self)
            import importlib.util
            spec = importlib.util.find_spec(name)
            loader = getattr(spec, "loader", None)
            run = getattr(loader, "exec_module", None)
            if run is not None:
                def exec_module(module):
                    run(module)
                    patch(module)
                loader.exec_module = exec_module
            return spec

    if folder:
        sys.meta_path.insert(0, Hook())
    del __main__._cowork_main
    sys.argv[0] = "-"
    try:
        source = getattr(sys.stdin, "buffer", sys.stdin).read()
        code = compile(source, "<stdin>", "exec", dont_inherit=True)
        del source
        exec(code, __main__.__dict__)
    except SystemExit:
        raise
    except BaseException:
        kind, error, trace = sys.exc_info()
        error.__traceback__ = trace.tb_next
        sys.excepthook(kind, error, trace.tb_next)
        sys.exit(1)

_cowork_main()
"#;
