#ifndef COPLAY_CFFMPEG_SHIM_H
#define COPLAY_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>

#endif
