//! `quiver man --markdown FILE`: the book's command-line reference, one Markdown page of
//! every subcommand and flag, generated from the command line's own definition (as the
//! manual pages are), so the book cannot drift from the binary: a test regenerates it and
//! compares it with `docs/src/reference/cli.md`.

use std::fmt::Write as _;

use clap::{Arg, Command};

/// The page for `command` (the whole `quiver` command line).
pub fn markdown(mut command: Command) -> String {
    command.build();
    let mut out = String::new();
    out.push_str("# Command line\n\n");
    out.push_str(
        "<!-- Generated from the command line's definition by \
         `quiver man --markdown docs/src/reference/cli.md`; a test fails when it is stale. -->\n\n",
    );
    out.push_str(
        "Every subcommand of `quiver`, with its arguments and their defaults. \
         `quiver help SUBCOMMAND` prints the same in a terminal, and `quiver man DIR` writes \
         it as manual pages.\n\n",
    );
    let mut commands = Vec::new();
    collect(&command, &mut Vec::new(), &mut commands);
    out.push_str("| command | what |\n|---|---|\n");
    for (path, sub) in &commands {
        let _ = writeln!(
            out,
            "| [`{}`](#{}) | {} |",
            path.join(" "),
            anchor(path),
            cell(&first_line(
                sub.get_about().map(|a| a.to_string()).unwrap_or_default()
            ))
        );
    }
    out.push('\n');
    for (path, sub) in &commands {
        section(&mut out, path, sub);
    }
    out
}

/// Every visible subcommand below `command`, depth first, with its path of names.
fn collect<'a>(
    command: &'a Command,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'a Command)>,
) {
    path.push(command.get_name().to_owned());
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        path.push(sub.get_name().to_owned());
        out.push((path.clone(), sub));
        path.pop();
        if sub.has_subcommands() {
            collect(sub, path, out);
        }
    }
    path.pop();
}

/// The heading's anchor as mdBook makes it: `quiver bench lubm` gives `quiver-bench-lubm`.
fn anchor(path: &[String]) -> String {
    path.join("-").to_lowercase()
}

fn section(out: &mut String, path: &[String], command: &Command) {
    let _ = writeln!(out, "## {}\n", path.join(" "));
    let about = command
        .get_long_about()
        .or(command.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    if !about.is_empty() {
        let _ = writeln!(out, "{}\n", about.trim());
    }
    let mut usage = command.clone().render_usage().to_string();
    if let Some(rest) = usage.strip_prefix("Usage: ") {
        usage = rest.to_owned();
    }
    let _ = writeln!(out, "```text\n{}\n```\n", usage.trim());
    let arguments: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    if arguments.is_empty() {
        return;
    }
    out.push_str("| argument | what | default |\n|---|---|---|\n");
    for arg in arguments {
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        let mut what = help.trim().to_owned();
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        // Values are listed once: clap prints them into the help of some arguments.
        if !values.is_empty() && !what.contains("[possible values") {
            let _ = write!(what, " (one of {})", values.join(", "));
        }
        let default: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        // A flag's `false` says nothing.
        let flag = !arg.get_action().takes_values();
        let default = if default.is_empty() || flag || arg.is_hide_default_value_set() {
            String::new()
        } else {
            format!("`{}`", default.join(","))
        };
        let _ = writeln!(out, "| `{}` | {} | {} |", name(arg), cell(&what), default);
    }
    out.push('\n');
}

/// How an argument is written: `--location <DIR>`, `-t, --threads <N>`, `<FILES>...`.
fn name(arg: &Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let takes_value = arg.get_action().takes_values();
    if arg.is_positional() {
        let many = arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        return format!("{value}{}", if many { "..." } else { "" });
    }
    let mut written = Vec::new();
    if let Some(short) = arg.get_short() {
        written.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        written.push(format!("--{long}"));
    }
    let flag = written.join(", ");
    if takes_value {
        format!("{flag} {value}")
    } else {
        flag
    }
}

/// Text safe in one table cell: no pipes, no line breaks.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .split('\n')
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("<br>")
}

fn first_line(text: String) -> String {
    text.lines().next().unwrap_or("").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_subcommands_and_arguments_are_listed() {
        let command = Command::new("quiver").subcommand(
            Command::new("bench")
                .about("Benchmarks")
                .subcommand(
                    Command::new("lubm")
                        .about("LUBM queries\nmore")
                        .arg(
                            Arg::new("runs")
                                .long("runs")
                                .help("Runs | per query")
                                .default_value("5"),
                        )
                        .arg(Arg::new("files").num_args(1..)),
                )
                .subcommand(Command::new("secret").hide(true)),
        );
        let page = markdown(command);
        assert!(page.contains("| [`quiver bench lubm`](#quiver-bench-lubm) | LUBM queries |"));
        assert!(page.contains("## quiver bench lubm\n"));
        assert!(
            page.contains("| `--runs <RUNS>` | Runs \\| per query | `5` |"),
            "{page}"
        );
        assert!(page.contains("| `<FILES>...` |"), "{page}");
        assert!(!page.contains("secret"));
    }
}
