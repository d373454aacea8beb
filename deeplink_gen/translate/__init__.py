"""Type translation, with no text: how an ATen schema becomes the C++
wrapper signature DIPU registers and, per argument, the kind of DIOPI
argument it is passed as (args, signature, through torchgen), and how the
adaptor converts one DIOPI function's tensors (conversion). Validation, the
plans, the templates and the importer all read these facts from here; it
imports only model/, interfaces/ and the modules below every stage."""
