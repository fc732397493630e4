"""Export: what leaves the lab for the game apps. ``model`` writes a trained policy as one ONNX file
and a JSON manifest (``hearts export``); ``golden`` makes the golden test vectors a game app checks
its encoder and runtime on; ``situations`` samples the game situations both read; ``fixtures`` writes
the JavaScript client's committed test fixtures. See ``docs/export.md``."""
