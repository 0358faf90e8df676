# A thin layer over swift. `make` builds the release binary; `make test` runs every test.
PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
CONFIG ?= release

.PHONY: all build debug test bench stress install uninstall clean

all: build

build:
	$(SWIFT) build -c $(CONFIG) --product ck

debug:
	$(SWIFT) build

# Builds the debug binary first: the end-to-end tests run it.
test: debug
	$(SWIFT) test --disable-swift-testing

bench: build
	bash bench/run.sh

stress: build
	bash bench/stress.sh

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 .build/$(CONFIG)/ck $(DESTDIR)$(PREFIX)/bin/ck

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/ck

clean:
	rm -rf .build
