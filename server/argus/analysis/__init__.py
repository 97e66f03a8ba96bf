"""The editor's questions answered from one immutable `Analysis` per (document, version), as plain data in Argus
spans (0-based lines, code-point columns): hover, completion, definition, outline, quick fixes, skill actions,
the verifier's verdicts. No pygls or lsprotocol here: the language server converts these answers to the
protocol, and any other caller (the CLI, a test, an agent) reads them as they are.

`argus.analysis.host.AnalysisHost` makes the snapshots; `argus.analysis.snapshot.Analysis` answers. Nothing is
imported here, so that naming the package loads no layer: the language core loads when a check needs it.
"""
