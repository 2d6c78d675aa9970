// io layer placeholder: keeps st_io a valid static library before the node stores land.
namespace st::io { int io_layer_version() { return 1; } }
