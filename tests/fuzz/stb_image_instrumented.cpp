// stb_image's implementation, compiled into the image fuzz target with its sanitizers:
// these definitions take precedence over Debian's libstb, so that an overflow inside the
// decoders is reported where it happens.
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>
