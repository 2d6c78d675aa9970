// engine_version: the on-disk/in-memory format version of the engine's structures.
namespace st::engine { int engine_format_version() { return 1; } }
