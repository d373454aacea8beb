"""`deeplink-gen import-dipu`: DIPU's diopi_functions.yaml (plus optional
DIOPI convert_config.yaml files and impl folders, and DIPU vendor runtime
folders), named one by one or found in a deeplink.framework checkout -> a workspace: one catalog file and one
vendor file per named vendor. The steps, in order:

    checkout    which files a checkout holds for the named vendors (--dipu)
    read        the upstream files, with the line of every entry and key
    dialect     which of DIPU's generators the file was written for (its spellings)
    translate   each upstream entry -> a catalog entry, or skipped (with notes),
                read as that generator reads it (placeholders: custom code's ${...})
    select      per vendor, the definition DIPU's device filter gives it
    runtime     each vendor's runtime folder -> its runtime: and build: sections
                and its hand-written files (runtime/: C++ read for one
                configuration, macros as checkers, bodies as entries, defects)
    write       validate the workspace in memory, drop what deeplink-gen
                rejects (by the key path of each problem), write the files

Upstream semantics are reproduced where they decide what a vendor gets: the
device filter, the torch_ver filter, the boolean readings of each key, the
rewriting of names inside the interface text, the memory-format lookup.
Problems of the upstream file are reported as warnings with their line;
each is either fixed (when the intent is unambiguous) or its entry skipped.
"""

from deeplink_gen.commands.import_dipu.run import ImportResult, command, import_dipu

__all__ = ["ImportResult", "command", "import_dipu"]
