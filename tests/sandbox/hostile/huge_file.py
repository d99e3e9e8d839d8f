# attack: a sparse 10 GiB file, then a file written until the file-size limit stops it
# verdict: runtime_error|output_limit
# limits: time_s=2 wall_s=3 memory_mb=128 file_size_mb=8
"""Python ignores SIGXFSZ, so the limit shows up as OSError(EFBIG), uncaught on
the second file: runtime_error."""
try:
    with open("sparse.bin", "wb") as f:
        f.seek(10 << 30)
        f.write(b"x")
    print("ESCAPED: created a 10 GiB sparse file with file_size_mb=8", flush=True)
except OSError as e:
    print(f"blocked: sparse file: {e.strerror}", flush=True)
chunk = b"B" * (1 << 20)
with open("big.bin", "wb") as f:
    for i in range(1024):
        f.write(chunk)
        f.flush()
print("ESCAPED: wrote 1 GiB with file_size_mb=8", flush=True)
