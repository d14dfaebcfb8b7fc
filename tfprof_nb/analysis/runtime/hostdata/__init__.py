"""One host's decoded columns and what the analyses derive from them: ``HostData``
(:mod:`.host`, the room's entry point), composed of one part per module over
:mod:`.host_core`."""
