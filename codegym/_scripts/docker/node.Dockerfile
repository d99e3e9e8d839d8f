# codegym/node:latest -- python3 + nodejs: JavaScript programs in the docker sandbox
# (python3 runs the fork server that supervises every program). Same contents as
# `docker-up.sh` with CODEGYM_IMAGES=node; `codegym images build node --method host`
# makes it from codegym/python:3.11 and this host's own node instead (no registry).
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 nodejs \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/*
ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["bash"]
