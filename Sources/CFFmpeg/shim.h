#ifndef COPLAY_CFFMPEG_SHIM_H
#define COPLAY_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/dict.h>
#include <libavutil/log.h>

// Function-like and cast macros that Swift cannot import, re-exported as prefixed static inline functions.

/// AVERROR(e): a POSIX errno as a libav* error code.
static inline int coplay_averror(int posix_errno) { return AVERROR(posix_errno); }

/// AVUNERROR(e): the POSIX errno inside a libav* error code.
static inline int coplay_avunerror(int av_error) { return AVUNERROR(av_error); }

/// AVERROR_EOF: end of file.
static inline int coplay_averror_eof(void) { return AVERROR_EOF; }

/// AVERROR_INVALIDDATA: invalid data found when processing input.
static inline int coplay_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }

/// AVERROR_EXIT: the interrupt callback asked to stop.
static inline int coplay_averror_exit(void) { return AVERROR_EXIT; }

/// AVERROR_DECODER_NOT_FOUND / DEMUXER_NOT_FOUND / STREAM_NOT_FOUND.
static inline int coplay_averror_demuxer_not_found(void) { return AVERROR_DEMUXER_NOT_FOUND; }
static inline int coplay_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }

/// AV_NOPTS_VALUE: "no timestamp".
static inline int64_t coplay_av_nopts_value(void) { return AV_NOPTS_VALUE; }

/// AV_TIME_BASE: the internal time base of AVFormatContext.duration and .start_time (microseconds).
static inline int coplay_av_time_base(void) { return AV_TIME_BASE; }

/// AVPROBE_PADDING_SIZE: zero bytes required after an AVProbeData buffer.
static inline int coplay_avprobe_padding_size(void) { return AVPROBE_PADDING_SIZE; }

/// AV_ERROR_MAX_STRING_SIZE.
static inline int coplay_av_error_max_string_size(void) { return AV_ERROR_MAX_STRING_SIZE; }

/// The number of audio channels of a stream (FFmpeg >= 5.1 channel layout API).
static inline int coplay_codecpar_channels(const AVCodecParameters *par) { return par->ch_layout.nb_channels; }

/// The number of streams in a format context, as a signed int for Swift loops.
static inline int coplay_nb_streams(const AVFormatContext *ctx) { return (int)ctx->nb_streams; }

/// The stream at `index` (no bounds check: callers stay below coplay_nb_streams).
static inline AVStream *coplay_stream(const AVFormatContext *ctx, int index) { return ctx->streams[index]; }

#endif
