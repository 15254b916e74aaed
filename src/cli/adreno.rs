//! `lathe adreno …`: Adreno driver helpers.

use super::CliResult;
use clap::{Args, Subcommand};
use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum AdrenoCommand {
    /// Plan fragment-density-map bins for a render pass described in a JSON
    /// scene file and print the per-bin plan as JSON.
    Fdm(FdmArgs),
}

#[derive(Args)]
pub struct FdmArgs {
    /// Scene file (JSON); `-` reads standard input. Keys are documented in
    /// `lathe_adreno::fdm::json`; samples live in `targets/adreno/examples/fdm/`.
    pub scene: PathBuf,
}

pub fn run(command: AdrenoCommand) -> CliResult {
    match command {
        AdrenoCommand::Fdm(args) => fdm(&args),
    }
}

fn fdm(args: &FdmArgs) -> CliResult {
    let from_stdin = args.scene.as_os_str() == "-";
    let name = if from_stdin {
        "<stdin>".to_string()
    } else {
        args.scene.display().to_string()
    };
    let text = if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the scene from standard input: {e}"))?;
        text
    } else {
        std::fs::read_to_string(&args.scene).map_err(|e| format!("cannot read {name}: {e}"))?
    };
    let plan = lathe_adreno::fdm::plan_scene_json(&text).map_err(|e| format!("{name}: {e}"))?;
    // A closed pipe (`lathe adreno fdm … | head`) is not an error.
    match writeln!(std::io::stdout().lock(), "{plan}") {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => {
            Err(format!("cannot write the plan: {e}").into())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fdm_error(path: &str) -> String {
        let args = FdmArgs {
            scene: PathBuf::from(path),
        };
        match fdm(&args) {
            Ok(()) => panic!("{path} was accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = fdm_error("/nonexistent/scene.json");
        assert!(
            err.starts_with("cannot read /nonexistent/scene.json:"),
            "{err}"
        );
    }

    #[test]
    fn bad_scene_names_file_and_field() {
        let dir = std::env::temp_dir().join(format!("lathe-fdm-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.json");
        let good = include_str!("../../targets/adreno/examples/fdm/multiview_a650.json");
        std::fs::write(&path, good.replace("\"views\": 2", "\"views\": 17")).unwrap();
        let err = fdm_error(path.to_str().unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            err.ends_with("bad.json: views: 17 views requested; Adreno supports at most 16"),
            "{err}"
        );
    }
}
