//! Subcommand implementations, one module per area.

pub mod adreno;
pub mod compile;
pub mod isa;
pub mod link;
pub mod mali;
pub mod opt;
pub mod sim;
pub mod stats;

/// The error every subcommand returns: printed once as `lathe: <message>`.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;

/// A subcommand's arguments (or nested subcommands), added to its
/// `clap::Command` only when that subcommand is the one parsed or its help
/// is printed. Building every subcommand's arguments up front cost each
/// `lathe compile` process about 0.1 M instructions, more than parsing the
/// arguments it was given. The derived help and errors are unchanged: the
/// subcommand's name and about text are still set eagerly by the parent.
pub struct Deferred<T>(pub T);

impl<T: clap::Args> clap::Args for Deferred<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.defer(T::augment_args)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd.defer(T::augment_args_for_update)
    }
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T: clap::Subcommand> clap::Subcommand for Deferred<T> {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        cmd.defer(T::augment_subcommands)
    }
    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        cmd.defer(T::augment_subcommands_for_update)
    }
    fn has_subcommand(name: &str) -> bool {
        T::has_subcommand(name)
    }
}

impl<T: clap::FromArgMatches> clap::FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }
    fn from_arg_matches_mut(matches: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Deferred)
    }
    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
    fn update_from_arg_matches_mut(
        &mut self,
        matches: &mut clap::ArgMatches,
    ) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}
