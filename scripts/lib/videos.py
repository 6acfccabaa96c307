"""What players make of a video file, for the VM checks: ffprobe's and ffmpeg's own view."""
import json
import subprocess


def probe(path):
    """{codec_name, width, height, frames, color_range} of the first video stream, frames counted by decoding."""
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                          "stream=codec_name,width,height,nb_read_frames,color_range", "-of", "json", path],
                         capture_output=True, timeout=300)
    streams = json.loads(out.stdout or b"{}").get("streams") or [{}]
    stream = streams[0]
    stream["frames"] = int(stream.get("nb_read_frames") or 0)
    return stream


def decode_errors(path):
    """What `ffmpeg -v error -i PATH -f null -` prints: nothing for a file that decodes clean."""
    out = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"], capture_output=True, timeout=300)
    return (out.stderr.decode(errors="replace").strip() or ("" if out.returncode == 0 else f"exit {out.returncode}"))


def still(path, seconds):
    """The frame at `seconds` as a player shows it (ffmpeg's decoder and colour handling), as JPEG bytes."""
    out = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-ss", str(seconds), "-i", path, "-frames:v", "1",
                          "-c:v", "mjpeg", "-q:v", "2", "-f", "image2pipe", "-"], capture_output=True, timeout=120)
    return out.stdout


def duration(path):
    """The video's length in seconds, as ffprobe reports the container's."""
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                         capture_output=True, text=True, timeout=60)
    try:
        return float(out.stdout.strip())
    except ValueError:
        return 0.0
