//! An example for every command's `--help`, kept in one table and put on the command tree when
//! it is built ([`command`]); a test checks that every command has one and that every example
//! names flags its command takes.

use clap::CommandFactory;

/// (command path, examples), the path as typed after `beyondswe`.
pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    (
        "",
        "beyondswe demo\n\
         beyondswe grade --dataset beyondswe.jsonl --test-suites suites --predictions preds.jsonl --run-id my-agent\n\
         beyondswe report runs/my-agent",
    ),
    (
        "convert",
        "beyondswe convert to-harbor beyondswe.jsonl tasks --test-suites suites\n\
         beyondswe convert from-harbor tasks beyondswe.jsonl",
    ),
    (
        "convert to-harbor",
        "beyondswe convert to-harbor beyondswe.jsonl tasks --test-suites suites\n\
         beyondswe convert to-harbor beyondswe.jsonl tasks --ids pallets__flask-4045 --force",
    ),
    (
        "convert from-harbor",
        "beyondswe convert from-harbor tasks beyondswe.jsonl",
    ),
    (
        "validate",
        "beyondswe validate beyondswe.jsonl --test-suites suites\n\
         beyondswe validate tasks --format json",
    ),
    (
        "schemas",
        "beyondswe schemas check schemas\n\
         beyondswe schemas write schemas",
    ),
    ("schemas write", "beyondswe schemas write schemas"),
    ("schemas check", "beyondswe schemas check schemas"),
    (
        "grade",
        "beyondswe grade --dataset beyondswe.jsonl --test-suites suites --predictions preds.jsonl --run-id my-agent\n\
         beyondswe grade --dataset beyondswe.jsonl --predictions gold --run-id gold --instance-ids a,b\n\
         beyondswe grade --dataset beyondswe.jsonl --predictions out/ --run-id my-agent --max-workers 8 --pull always",
    ),
    (
        "calibrate",
        "beyondswe calibrate --dataset beyondswe.jsonl --test-suites suites -o calibration.json\n\
         beyondswe grade --dataset beyondswe.jsonl --predictions preds.jsonl --run-id my-agent --calibration calibration.json --exclude-flaky",
    ),
    (
        "report",
        "beyondswe report runs/my-agent\n\
         beyondswe report runs/my-agent --format markdown",
    ),
    (
        "compare",
        "beyondswe compare runs/baseline runs/my-agent\n\
         beyondswe compare runs/baseline runs/my-agent --format html > compare.html",
    ),
    (
        "merge",
        "beyondswe grade --dataset beyondswe.jsonl --predictions preds.jsonl --run-id part1 --shard 1/2\n\
         beyondswe merge runs/part1 runs/part2 -o runs/all",
    ),
    (
        "grade-one",
        "beyondswe grade-one --dataset beyondswe.jsonl --instance pallets__flask-4045 --patch fix.diff\n\
         beyondswe grade-one --dataset beyondswe.jsonl --test-suites suites --instance ID --repo out/ID --format json",
    ),
    (
        "image",
        "beyondswe image pull --dataset beyondswe.jsonl\n\
         beyondswe image prune --max-prepared-gb 20",
    ),
    (
        "image build",
        "beyondswe image build fixtures/images/calc --tag beyondswe-fixture/calc:1 --if-missing",
    ),
    (
        "image pull",
        "beyondswe image pull --dataset beyondswe.jsonl\n\
         beyondswe image pull --dataset beyondswe.jsonl --ids pallets__flask-4045 --pull always\n\
         beyondswe image pull registry.example.com/org/instance:1",
    ),
    (
        "image prune",
        "beyondswe image prune --max-prepared-gb 20 --dry-run\n\
         beyondswe image prune",
    ),
    (
        "ingest",
        "beyondswe ingest trajectories/ -o preds.jsonl --dataset beyondswe.jsonl\n\
         beyondswe ingest session.jsonl --agent-format claude-code --instance ID --patches diffs -o preds.jsonl",
    ),
    (
        "capture",
        "beyondswe capture /workspace/repo --base 1a2b3c4 -o ID.diff",
    ),
    (
        "release",
        "beyondswe release from-harbor jobs -o release.jsonl --dataset beyondswe.jsonl\n\
         beyondswe release to-harbor release.jsonl jobs",
    ),
    (
        "release from-harbor",
        "beyondswe release from-harbor jobs -o release.jsonl --dataset beyondswe.jsonl --no-logs",
    ),
    (
        "release to-harbor",
        "beyondswe release to-harbor release.jsonl jobs",
    ),
    (
        "audit",
        "beyondswe audit release.jsonl --dataset beyondswe.jsonl\n\
         beyondswe audit trajectories/ --dataset beyondswe.jsonl --search-disallowed --format json",
    ),
    ("trajectory", "beyondswe trajectory validate jobs/my-job"),
    (
        "trajectory validate",
        "beyondswe trajectory validate jobs/my-job\n\
         beyondswe trajectory validate trajectory.json --format json",
    ),
    (
        "verify",
        "beyondswe verify release.jsonl --dataset beyondswe.jsonl --test-suites suites\n\
         beyondswe verify jobs/my-job --dataset beyondswe.jsonl --max-workers 4",
    ),
    (
        "parity",
        "beyondswe parity jobs/run1 jobs/run2 --dataset beyondswe.jsonl -o parity --adapter-name beyondswe",
    ),
    (
        "demo",
        "beyondswe demo\n\
         beyondswe demo --results-dir /tmp/demo-runs --jobs 4",
    ),
];

/// The command tree with each command's examples after its help.
pub(crate) fn command() -> clap::Command {
    with_examples(super::Cli::command(), "")
}

fn with_examples(mut cmd: clap::Command, path: &str) -> clap::Command {
    if let Some((_, text)) = EXAMPLES.iter().find(|(p, _)| *p == path) {
        let body: String = text.lines().map(|l| format!("  {l}\n")).collect();
        cmd = cmd.after_help(format!("Examples:\n{}", body.trim_end()));
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .filter(|n| n != "help")
        .collect();
    for name in names {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |s| with_examples(s, &sub_path));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command path, the root as "".
    fn paths(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        out.push(path.to_owned());
        for s in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let p = if path.is_empty() {
                s.get_name().to_owned()
            } else {
                format!("{path} {}", s.get_name())
            };
            paths(s, &p, out);
        }
    }

    #[test]
    fn every_command_has_examples_and_every_example_a_command() {
        let cmd = command();
        let mut all = Vec::new();
        paths(&cmd, "", &mut all);
        for p in &all {
            assert!(
                EXAMPLES.iter().any(|(e, _)| e == p),
                "`beyondswe {p}` has no example in cli/examples.rs"
            );
        }
        for (p, _) in EXAMPLES {
            assert!(
                all.contains(&p.to_string()),
                "example for no command: `{p}`"
            );
        }
    }

    /// Each example line parses as the command line it shows (file names aside: nothing runs).
    #[test]
    fn every_example_parses() {
        let mut bad = Vec::new();
        for (_, text) in EXAMPLES {
            for line in text.lines() {
                let words: Vec<&str> = line.split_whitespace().take_while(|w| *w != ">").collect();
                if let Err(e) = command().try_get_matches_from(&words) {
                    bad.push(format!("`{line}`: {e}"));
                }
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    /// Every command's `--help`, as it prints: a change to a flag or a text shows in review,
    /// and the README's command lines are checked against these in tests/it/cli.rs.
    #[test]
    fn help_texts() {
        let cmd = command();
        let mut all = Vec::new();
        paths(&cmd, "", &mut all);
        let mut text = String::new();
        for p in &all {
            let mut words = vec!["beyondswe"];
            words.extend(p.split_whitespace());
            words.push("--help");
            let help = match command().term_width(100).try_get_matches_from(&words) {
                Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => e.render().to_string(),
                other => panic!("`{}`: {other:?}", words.join(" ")),
            };
            text.push_str(&format!("=== beyondswe {p}\n{help}\n"));
        }
        insta::assert_snapshot!("help", text);
    }
}
