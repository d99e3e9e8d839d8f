# codegym/cpp:latest (also :gcc12) -- g++, gcc, make; NO python, so the docker sandbox
# cannot run its fork server here: use codegym/polyglot for C and C++ programs.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ make \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/*
ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["bash"]
