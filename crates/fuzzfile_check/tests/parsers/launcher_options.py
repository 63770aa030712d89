#!/usr/bin/env python3
"""Parse launch lines as a launcher's own parser does, from the option table of that parser.

Usage: launcher_options.py TABLE.json < lines

TABLE.json lists the launcher's options as its parser declares them (every spelling, whether
it takes a value, its `dest`), its positional arguments, and whether the parser allows
abbreviations (see the `source` and `commit` in the file). This script builds the same parser
with Python's own argparse (or click, for Lightning's `fabric run`, whose CLI is a click
command), so abbreviations, `--flag=value`, the `_`/`-` spellings, the first positional word
starting the program and everything after it going to the program are decided by the real
parsing libraries, not by the semantics layer under test.

Each input line is a JSON list of arguments (what follows the launcher word); each output line
has three fields separated by tabs: `ok` (or `refused: <argparse's message>`), the settings as
`name=value` items, and the program's words, the items of each field separated by the unit
separator (0x1f). The settings are keyed by the launcher-independent names of the table's
`settings` map (the first of its options that is given).
"""

import argparse
import json
import sys


US = "\x1f"


class Rejected(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Rejected(message)


def argparse_parser(table):
    p = Parser(prog=table["tool"], allow_abbrev=table["allow_abbrev"], add_help=False)
    for opt in table["options"]:
        if opt["takes_value"]:
            p.add_argument(*opt["strings"], dest=opt["dest"], default=argparse.SUPPRESS)
        else:
            p.add_argument(
                *opt["strings"], dest=opt["dest"], action="store_true", default=argparse.SUPPRESS
            )
    first, rest = table["positionals"]
    p.add_argument(first["dest"])
    p.add_argument(rest["dest"], nargs=argparse.REMAINDER)
    return p


def parse_argparse(table, args):
    ns = vars(argparse_parser(table).parse_args(args))
    first, rest = (p["dest"] for p in table["positionals"])
    return ns, [ns[first]] + list(ns[rest])


def parse_click(table, args):
    import click

    params = [click.Argument([table["positionals"][0]["dest"]])]
    for opt in table["options"]:
        params.append(click.Option(opt["strings"], opt["dest"], type=str, default=None))
    rest = table["positionals"][1]["dest"]
    params.append(click.Argument([rest], nargs=-1, type=click.UNPROCESSED))
    cmd = click.Command(
        table["tool"], params=params, context_settings={"ignore_unknown_options": True}
    )
    try:
        ctx = cmd.make_context(table["tool"], list(args))
    except click.exceptions.ClickException as e:
        raise Rejected(e.format_message())
    ns = {k: v for k, v in ctx.params.items() if v is not None}
    return ns, [ns[table["positionals"][0]["dest"]]] + list(ns.get(rest, ()))


def main():
    table = json.load(open(sys.argv[1]))
    parse = parse_click if table["engine"] == "click" else parse_argparse
    for line in sys.stdin:
        args = json.loads(line)
        try:
            ns, program = parse(table, args)
        except Rejected as e:
            print("refused: " + str(e).replace("\t", " ") + "\t\t")
            sys.stdout.flush()
            continue
        settings = {}
        for name, dests in table["settings"].items():
            for d in dests:
                if d in ns:
                    settings[name] = str(ns[d])
                    break
        items = US.join(f"{k}={v}" for k, v in settings.items())
        print("ok\t" + items + "\t" + US.join(program))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
