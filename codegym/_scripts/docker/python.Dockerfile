# codegym/python:3.11 -- python3 (stdlib only, no pip) for the docker sandbox backend.
# Same contents as `docker-up.sh` with CODEGYM_IMAGES=python (Debian bookworm minbase + python3).
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/*
ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["python3"]
