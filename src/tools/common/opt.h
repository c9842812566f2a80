/* SPDX-License-Identifier: MIT */
/*
 * The busypoll program's option tables: every subcommand declares its options as
 * data (name, short name, kind, range, the field it fills, which role may use it,
 * help and default) and one parser reads a command line against them. The one-line
 * errors, `--help`, `--version` and the exit status 2 of bad input all come from
 * here, so every command words them the same way.
 *
 * Tables are layered: a command passes its layers in order (the common options
 * every command has, at the end of this file, then the transport options of the network benchmarks, then
 * its own), each with the struct its offsets are relative to. An option is looked
 * up in that order, and each layer's check (the rules that involve two options)
 * runs in that order once the whole command line is read, so the order of the
 * options on the command line never matters.
 *
 * Nothing here does I/O except --help and --version (stdout).
 */
#ifndef BP_TOOLS_COMMON_OPT_H
#define BP_TOOLS_COMMON_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <busypoll/mode.h>

#define OPT_MAX_SPECS 96   /* options of one command, all layers */
#define OPT_MAX_LAYERS 4
#define OPT_MODE_TEXT 128  /* the canonical mode text every command keeps */

/* What an option's value is, and so how it is read and checked. */
enum opt_kind {
	OPT_FLAG,     /* no value; sets a bool */
	OPT_INT,      /* a whole number in [lo, hi] (hi INT64_MAX: no limit); u8/u16/u32/u64/int field */
	OPT_SIZE,     /* bytes with an optional k or M suffix, 1..hi; uint32_t field */
	OPT_SECONDS,  /* a time (decimal, optional s/ms/m/h unit) up to max_s seconds (OPT_F_ZERO_OK: 0 allowed); double field */
	OPT_CHOICE,   /* one of choices[] (NULL-terminated); int field gets the index */
	OPT_CPUS,     /* a CPU list of CPUs this machine has; int[] field, count (int) at aux */
	OPT_MODE,     /* a wait mode, parsed and checked against this kernel and process;
		       * struct bp_mode field, canonical text (char[OPT_MODE_TEXT]) at aux */
	OPT_HOST,     /* a host name or address; char[] field (refuses "" and "-..." : a missing value) */
	OPT_TEXT,     /* any text, not empty; char[] field (OPT_F_DASH_OK: may start with '-') */
	OPT_CUSTOM,   /* parse(spec, name, value, base, err) does it */
};

/* Who may give an option, for commands with --server and --client. */
enum opt_role { OPT_ROLE_ANY = 0, OPT_ROLE_SERVER, OPT_ROLE_CLIENT };

enum {
	OPT_F_REPEAT = 1u << 0,   /* may be given more than once (a list built up by parse) */
	OPT_F_ZERO_OK = 1u << 1,  /* SECONDS: 0 is allowed */
	OPT_F_DASH_OK = 1u << 2,  /* TEXT: the value may start with '-' (it is a command line) */
	OPT_F_OPTIONAL = 1u << 3, /* CUSTOM: the value is optional (--opt or --opt=VALUE) */
	OPT_F_HIDDEN = 1u << 4,   /* not listed in --help (an alias: see alias_of) */
};

struct opt_spec;
/*
 * A CUSTOM option's parser: name is the option as messages spell it ("--sweep"),
 * value the text (NULL for an optional value not given), base the layer's struct.
 * Returns 0 or -EINVAL with one line in err that names the option and the value.
 */
typedef int (*opt_parse_fn)(const struct opt_spec *s, const char *name, const char *value, void *base,
			    char *err, size_t errlen);

struct opt_spec {
	const char *name;          /* long name without "--"; NULL: short only */
	char shortname;            /* 0: long only */
	enum opt_kind kind;
	unsigned flags;            /* OPT_F_* */
	enum opt_role role;
	size_t off, size;          /* the field it fills (offset into the layer's struct, bytes) */
	size_t aux;                /* CPUS: the count's offset; MODE: the text's offset */
	long long lo, hi;          /* INT range; SIZE: hi is the largest size */
	double max_s;              /* SECONDS: the largest value */
	const char *const *choices; /* CHOICE */
	opt_parse_fn parse;        /* CUSTOM */
	const char *arg;           /* the value's name in --help and messages: "N", "HOST" */
	const char *help;          /* --help text; '\n' continues on an indented line */
	const char *dflt;          /* "(default X)" appended to the help, NULL for none,
				    * OPT_DFLT_FIELD: the field's value before parsing (the command's default) */
	const char *role_why;      /* the refusal for the other role, after "--x is a client option" */
	const char *alias_of;      /* an alias of this long name: messages and repeats count as it */
};

/* dflt: print the field's own default value (INT, SIZE, SECONDS, CHOICE, MODE, HOST, TEXT). */
#define OPT_DFLT_FIELD ""

/* Field helpers for the table entries: offset and size of member m of struct type T. */
#define OPT_FIELD(T, m) .off = offsetof(T, m), .size = sizeof(((T *)0)->m)
#define OPT_MODE_FIELD(T, m, text) OPT_FIELD(T, m), .aux = offsetof(T, text)
#define OPT_CPUS_FIELD(T, m, count) OPT_FIELD(T, m), .aux = offsetof(T, count)

/* What was given: counted per option (aliases count as their option), last value kept. */
struct opt_seen {
	int n;
	const struct opt_spec *spec[OPT_MAX_SPECS];
	void *base[OPT_MAX_SPECS];
	unsigned count[OPT_MAX_SPECS];
	const char *text[OPT_MAX_SPECS];  /* the value as typed (NULL for flags) */
	int npos;                         /* positional arguments, in order */
	char *pos[64];
};

/*
 * A layer's check: the rules that involve two options of it (or of a layer before
 * it), once the whole command line is read. base is the layer's struct. Returns 0
 * or -EINVAL with one line in err.
 */
typedef int (*opt_check_fn)(void *base, const struct opt_seen *seen, char *err, size_t errlen);

struct opt_table {
	const char *title;          /* heading in --help ("server only:"), NULL for none */
	const struct opt_spec *specs;
	size_t n;
	opt_check_fn check;         /* may be NULL */
};

/* OPT_TABLE - a table of the array specs (its size counted) with its check (may be NULL). */
#define OPT_TABLE(specs_, check_) { .specs = (specs_), .n = sizeof(specs_) / sizeof((specs_)[0]), .check = (check_) }

/* One layer of a command line: a table and the struct its offsets point into. */
struct opt_layer {
	const struct opt_table *table;
	void *base;
};

/* A command: its name, its usage text around the option list, and its rules. */
struct opt_cmd {
	const char *name;           /* "rr": messages say "see busypoll rr --help" */
	const char *usage;          /* printed before the options (usage lines, description) */
	const char *epilog;         /* printed after them (exit statuses, notes), may be NULL */
	int max_positional;         /* positional arguments allowed (0: none) */
	bool options_after_positional; /* "set ID k=v --netns NS": options may follow them */
};

/*
 * opt_parse - read argv[1..argc) against the layers (nlayers, in lookup order) into
 * their structs, which the caller filled with defaults. Every value is checked by
 * its kind; a single-value option given twice, a missing or unexpected value, an
 * unknown or ambiguous option, a stray argument are refused; then each layer's
 * check runs, in order. seen gets what was given (may be NULL).
 * Returns 0; 1 when --help or --version was printed (exit 0); -EINVAL with one line
 * in err naming the option as its long form and the value as typed (exit 2).
 */
int opt_parse(const struct opt_cmd *cmd, const struct opt_layer *layers, int nlayers, int argc,
	      char **argv, struct opt_seen *seen, char *err, size_t errlen);

/*
 * opt_check_role - every option given belongs to role (or to both). The refusal
 * names the first that does not: "--udp is a client option: <role_why>", or the
 * default reasons. Returns 0 or -EINVAL.
 */
int opt_check_role(const struct opt_seen *seen, enum opt_role role, char *err, size_t errlen);

/* opt_given - how many times option NAME (its long name, or "-c" for a short-only one) was given. */
unsigned opt_given(const struct opt_seen *seen, const char *name);
/* opt_text - the value option NAME was last given as typed, NULL when not given. */
const char *opt_text(const struct opt_seen *seen, const char *name);
/* opt_spec_name - "--threads", or "-n" for a short-only option, into buf. */
const char *opt_spec_name(const struct opt_spec *s, char *buf, size_t len);

/* opt_usage - the command's --help: its usage text, every layer's options, the epilog. */
void opt_usage(FILE *out, const struct opt_cmd *cmd, const struct opt_layer *layers, int nlayers);

/*
 * opt_mode_default - the mode every command runs when none is given, epoll:block,
 * exactly as `--mode epoll:block` gives it (the unit tests hold the two equal), and
 * its canonical text: a constant, never text parsed at run time.
 */
extern const struct bp_mode opt_mode_default;
extern const char opt_mode_default_text[OPT_MODE_TEXT];

/*
 * opt_mode_read - parse and check a mode as --mode does: 0, or -EINVAL with
 * "NAME TEXT: why" in err (-EOPNOTSUPP/-EPERM are -EINVAL here: the command exits 2).
 * text_out gets the canonical text (OPT_MODE_TEXT bytes).
 */
int opt_mode_read(const char *name, const char *text, struct bp_mode *m, char *text_out, char *err,
		  size_t errlen);

/*
 * ---- the common layer ----
 * The options every subcommand has (besides --help and --version, which the
 * parser itself answers): -q/--quiet and --format table|json|csv. A command's
 * options struct carries them as TOOL_COMMON, so its code reads o->quiet and
 * o->format while the shared table fills o->common.
 */
/* The output formats, in --format's order. */
enum tool_format { TOOL_FORMAT_TABLE = 0, TOOL_FORMAT_JSON, TOOL_FORMAT_CSV };

#define TOOL_COMMON_FIELDS                                                              \
	bool quiet;               /* -q: no progress or log lines */                   \
	enum tool_format format;  /* --format */
struct tool_common {
	TOOL_COMMON_FIELDS
};
/* In a command's options struct: o->quiet and o->format, and o->common for the table. */
#define TOOL_COMMON                                                                     \
	union {                                                                         \
		struct tool_common common;                                              \
		struct {                                                                \
			TOOL_COMMON_FIELDS                                              \
		};                                                                      \
	}

/* The common layer: -q/--quiet and --format table|json|csv (base: struct tool_common). */
extern const struct opt_table tool_common_table;
/* tool_format_names - "table", "json", "csv", NULL. */
extern const char *const tool_format_names[];

#endif
