import Foundation
import Glibc
import TestSupport
import Testing

/// `scripts/install` and `scripts/uninstall` for real, into a temporary PREFIX, and what they
/// install used the way a user's shell and `man` use it: mandoc's linter on the man page,
/// bash's `compgen` through the installed completion script, zsh's completion system in a
/// pseudo-terminal, and fish's `complete -C`.
///
/// The tests install the debug build (`--binary`), so they need no release build.
@Suite(.tags(.system), .systemTier) struct InstallTests {
  /// The repository: three folders up from this file.
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  /// What `scripts/install` puts under PREFIX, with its mode.
  static let installed: [(path: String, mode: mode_t)] = [
    ("bin/squeeze", 0o755),
    ("share/man/man1/squeeze.1", 0o644),
    ("share/bash-completion/completions/squeeze", 0o644),
    ("share/zsh/site-functions/_squeeze", 0o644),
    ("share/fish/vendor_completions.d/squeeze.fish", 0o644),
  ]

  /// Installs the debug build under a new PREFIX.
  static func install(environment: [String: String]? = nil, prefix: String) throws
    -> Shell.Result
  {
    try Shell.run(
      repository + "/scripts/install", ["--binary", SqueezeBinary.path, prefix],
      environment: environment)
  }

  /// A fresh PREFIX with squeeze installed in it.
  static func installedPrefix() throws -> TemporaryFolder {
    let folder = TemporaryFolder("prefix")
    let result = try install(prefix: folder.url("usr"))
    try #require(result.status == 0, "\(result.stderrText)")
    return folder
  }

  @Test func installPutsExactlyItsFilesAndUninstallRemovesExactlyThose() throws {
    let folder = TemporaryFolder("install")
    let prefix = folder.url("usr")
    try folder.write("usr/share/man/man1/other.1", text: "someone else's page")
    let result = try Self.install(prefix: prefix)
    #expect(result.status == 0, "\(result.stderrText)")
    for (path, mode) in Self.installed {
      var status = stat()
      try #require(stat(prefix + "/" + path, &status) == 0, "\(path) not installed")
      #expect(status.st_mode & 0o7777 == mode, "\(path) mode \(String(status.st_mode, radix: 8))")
      #expect(result.stdoutText.contains("installed \(prefix)/\(path)\n"))
    }
    #expect(
      Set(TemporaryFolder.files(in: prefix))
        == Set(Self.installed.map(\.path) + ["share/man/man1/other.1"]))
    // The documents are the installed binary's own, from its option table.
    let binary = prefix + "/bin/squeeze"
    #expect(try Shell.run(binary, ["--version"]).stdoutText.hasPrefix("squeeze "))
    #expect(
      try folder.read("usr/share/man/man1/squeeze.1")
        == SqueezeBinary.run(["--generate-manual"]).stdout)
    for (shell, path) in [
      ("bash", "share/bash-completion/completions/squeeze"),
      ("zsh", "share/zsh/site-functions/_squeeze"),
      ("fish", "share/fish/vendor_completions.d/squeeze.fish"),
    ] {
      #expect(
        try folder.read("usr/" + path)
          == SqueezeBinary.run(["--generate-completion-script", shell]).stdout, "\(shell)")
    }

    let removal = try Shell.run(Self.repository + "/scripts/uninstall", [prefix])
    #expect(removal.status == 0, "\(removal.stderrText)")
    #expect(TemporaryFolder.files(in: prefix) == ["share/man/man1/other.1"])
    for (path, _) in Self.installed {
      #expect(removal.stdoutText.contains("removed \(prefix)/\(path)\n"))
    }
    // Nothing left to remove is not an error.
    #expect(try Shell.run(Self.repository + "/scripts/uninstall", [prefix]).status == 0)
  }

  @Test func destdirStagesTheInstall() throws {
    let folder = TemporaryFolder("destdir")
    var environment = ProcessInfo.processInfo.environment
    environment["DESTDIR"] = folder.url("stage")
    let result = try Self.install(environment: environment, prefix: "/usr")
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(
      Set(TemporaryFolder.files(in: folder.url("stage")))
        == Set(Self.installed.map { "usr/" + $0.path }))
  }

  @Test func theInstalledManPagePassesMandocLint() throws {
    let folder = try Self.installedPrefix()
    let page = folder.url("usr/share/man/man1/squeeze.1")
    let lint = try Shell.run("/usr/bin/mandoc", ["-T", "lint", "-W", "warning", page])
    // mandoc's notes about the machine's own mandoc.db are not about this page.
    let messages = (lint.stdoutText + lint.stderrText).split(separator: "\n").filter {
      !$0.contains("mandoc.db")
    }
    #expect(lint.status == 0, "\(messages)")
    #expect(messages.isEmpty, "\(messages)")
    // And it renders, with every option table section.
    let rendered = try Shell.run("/usr/bin/mandoc", ["-T", "ascii", page])
    #expect(rendered.status == 0)
    // Bold is overstruck (`N\bN`): keep the last character of each.
    var plain = ""
    for character in rendered.stdoutText {
      if character == "\u{8}" { plain.removeLast() } else { plain.append(character) }
    }
    for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "EXAMPLES", "SEE ALSO"] {
      #expect(plain.contains("\n\(heading)\n"), "\(heading)")
    }
    #expect(plain.contains("--one-file-system"))
  }

  /// What bash's completion of `words` (the last one being completed) offers through the
  /// installed script, in a folder with the files `files` and the folders `folders`.
  static func bashCompletions(
    _ words: [String], prefix: TemporaryFolder, files: [String] = ["a.txt"],
    folders: [String] = ["dir"]
  ) throws -> [String] {
    let work = TemporaryFolder("bash-work")
    for file in files { try work.write(file, text: "a") }
    for folder in folders { try work.makeFolder(folder) }
    let script = prefix.url("usr/share/bash-completion/completions/squeeze")
    let line = words.joined(separator: " ")
    let command = """
      source \(Shell.quote(script))
      function=$(complete -p squeeze | sed -n 's/.*-F \\([^ ]*\\) squeeze$/\\1/p')
      COMP_WORDS=(\(words.map(Shell.quote).joined(separator: " ")))
      COMP_CWORD=\(words.count - 1)
      COMP_LINE=\(Shell.quote(line))
      COMP_POINT=${#COMP_LINE}
      "$function" squeeze \(Shell.quote(words.last ?? "")) \(Shell.quote(words.dropLast().last ?? ""))
      printf '%s\\n' "${COMPREPLY[@]}"
      """
    let result = try Shell.run("/bin/bash", ["-c", command], currentDirectory: work.path)
    try #require(result.status == 0, "\(result.stderrText)")
    #expect(result.stderr.isEmpty, "\(result.stderrText)")
    return result.stdoutText.split(separator: "\n").map(String.init).sorted()
  }

  @Test func bashCompletesTheInstalledScript() throws {
    let prefix = try Self.installedPrefix()
    #expect(try Self.bashCompletions(["squeeze", "--rsync"], prefix: prefix) == ["--rsyncable"])
    #expect(
      try Self.bashCompletions(["squeeze", "--pro"], prefix: prefix) == [
        "--processes", "--progress",
      ])
    #expect(
      try Self.bashCompletions(["squeeze", "--progress", ""], prefix: prefix)
        == ["auto", "bar", "none", "plain"])
    // `--progress=p`: bash makes `=` a word of its own.
    #expect(
      try Self.bashCompletions(["squeeze", "--progress", "=", "p"], prefix: prefix) == ["plain"])
    #expect(try Self.bashCompletions(["squeeze", "-o", ""], prefix: prefix) == ["dir"])
    #expect(
      try Self.bashCompletions(["squeeze", ""], prefix: prefix) == ["a.txt", "dir", "timeline"])
    #expect(
      try Self.bashCompletions(["squeeze", "timeline", "--o"], prefix: prefix) == ["--output"])
    #expect(try Self.bashCompletions(["squeeze", "-j", ""], prefix: prefix) == [])
  }

  /// After `--` every word is a path, as the parser reads it (`squeeze -- -v` compresses a
  /// file named `-v`): bash offers file names there, never options or an option's values.
  @Test func bashOffersOnlyFileNamesAfterDoubleDash() throws {
    let prefix = try Self.installedPrefix()
    let files = ["-v", "--rm", "a.txt"]
    #expect(
      try Self.bashCompletions(["squeeze", "--", "-"], prefix: prefix, files: files)
        == ["--rm", "-v"])
    #expect(
      try Self.bashCompletions(["squeeze", "-d", "--", "-o", ""], prefix: prefix, files: files)
        == ["--rm", "-v", "a.txt", "dir"])
    #expect(
      try Self.bashCompletions(["squeeze", "timeline", "--", "-"], prefix: prefix, files: files)
        == ["--rm", "-v"])
    // Before `--`, options as always.
    #expect(try Self.bashCompletions(["squeeze", "--rsync"], prefix: prefix) == ["--rsyncable"])
  }

  /// A name with `*`, `?` or `[` is offered as it is, once: the script's `compgen` results
  /// must not go through pathname expansion, which turned `x*` into every name it matches.
  @Test func bashOffersNamesWithGlobCharactersAsTheyAre() throws {
    let prefix = try Self.installedPrefix()
    let files = ["x*", "x?", "x[y]", "xyz"]
    let folders = ["d*", "d 1"]
    #expect(
      try Self.bashCompletions(["squeeze", "x"], prefix: prefix, files: files, folders: folders)
        == ["x*", "x?", "x[y]", "xyz"])
    #expect(
      try Self.bashCompletions(
        ["squeeze", "-o", "d"], prefix: prefix, files: files, folders: folders) == ["d 1", "d*"])
    #expect(
      try Self.bashCompletions(
        ["squeeze", "--task-log", "x"], prefix: prefix, files: files, folders: folders)
        == ["x*", "x?", "x[y]", "xyz"])
    #expect(
      try Self.bashCompletions(
        ["squeeze", "timeline", "x"], prefix: prefix, files: files, folders: folders)
        == ["x*", "x?", "x[y]", "xyz"])
  }

  /// What zsh's completion system makes of `line` followed by a completion: an interactive
  /// zsh in a pseudo-terminal (`zsh/zpty`) with the installed folder on `fpath` and
  /// `compinit` run, where a widget completes and writes the edited line to a file.
  static func zshCompletes(_ line: String, prefix: TemporaryFolder) throws -> String {
    let work = TemporaryFolder("zsh-work")
    try work.write("a.txt", text: "a")
    let output = work.url("edited")
    let driver = try work.write(
      "driver.zsh",
      text: """
        zmodload zsh/zpty
        zpty -b z zsh -f -i
        zpty -w z "fpath=(${(q)1} \\$fpath); autoload -U compinit; compinit -u -D; cd ${(q)2}"
        zpty -w z "_t() { zle complete-word; print -r -- \\"\\$BUFFER\\" > ${(q)4}; }; zle -N _t; bindkey '^T' _t"
        zpty -w -n z "$3"$'\\x14'
        for i in {1..100}; do [[ -s $4 ]] && break; sleep 0.1; done
        zpty -d z

        """)
    let result = try Shell.run(
      "/usr/bin/zsh",
      ["-f", driver, prefix.url("usr/share/zsh/site-functions"), work.path, line, output])
    try #require(result.status == 0, "\(result.stderrText)")
    return String(decoding: (try? work.read("edited")) ?? [], as: UTF8.self)
  }

  @Test func zshCompletesTheInstalledScript() throws {
    let prefix = try Self.installedPrefix()
    let syntax = try Shell.run(
      "/usr/bin/zsh", ["-n", prefix.url("usr/share/zsh/site-functions/_squeeze")])
    #expect(syntax.status == 0, "\(syntax.stderrText)")
    #expect(
      try Self.zshCompletes("squeeze --one-f", prefix: prefix) == "squeeze --one-file-system \n")
    #expect(
      try Self.zshCompletes("squeeze --progress p", prefix: prefix) == "squeeze --progress plain \n"
    )
    #expect(try Self.zshCompletes("squeeze ti", prefix: prefix) == "squeeze timeline \n")
    #expect(
      try Self.zshCompletes("squeeze timeline --o", prefix: prefix)
        == "squeeze timeline --output \n")
    #expect(try Self.zshCompletes("squeeze a.t", prefix: prefix) == "squeeze a.txt \n")
  }

  @Test func fishCompletesTheInstalledScript() throws {
    let prefix = try Self.installedPrefix()
    let work = TemporaryFolder("fish-work")
    try work.write("a.txt", text: "a")
    // fish loads the script from where it looks for vendor completions, by the name of a
    // command on the PATH (the installed one).
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = prefix.url("usr/bin") + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    environment["HOME"] = work.path
    func complete(_ line: String) throws -> [String] {
      let command = """
        set -g fish_complete_path \(Shell.quote(prefix.url("usr/share/fish/vendor_completions.d"))) $fish_complete_path
        complete -C \(Shell.quote(line))
        """
      let result = try Shell.run(
        "/usr/bin/fish", ["-c", command], environment: environment, currentDirectory: work.path)
      try #require(result.status == 0, "\(result.stderrText)")
      return result.stdoutText.split(separator: "\n").map {
        String($0.prefix { $0 != "\t" })
      }.sorted()
    }
    #expect(try complete("squeeze --one-f") == ["--one-file-system"])
    #expect(
      try complete("squeeze --isolation ") == [
        "actor", "blocking", "detached", "main-actor", "nonisolated",
      ])
    #expect(try complete("squeeze timeline --") == ["--force", "--help", "--output"])
    #expect(try complete("squeeze a.") == ["a.txt"])
  }

  /// bash-completion's loader, which Debian's `bash-completion` package installs.
  static let bashCompletionLoader = "/usr/share/bash-completion/bash_completion"
  static let hasBashCompletion = FileManager.default.fileExists(atPath: bashCompletionLoader)

  /// The line `scripts/install` prints after `marker` (on the same line, or the next one
  /// when `marker` ends its line): what to add to a shell's start-up file.
  static func line(after marker: String, in message: String) throws -> String {
    let lines = message.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let index = try #require(
      lines.firstIndex { $0.contains(marker) }, "no '\(marker)' in \(message)")
    let rest = lines[index].components(separatedBy: marker).last ?? ""
    let text = rest.trimmingCharacters(in: .whitespaces).isEmpty ? lines[index + 1] : rest
    return text.trimmingCharacters(in: .whitespaces)
  }

  /// An environment for a shell run as a user whose home is `home`, with the installed
  /// binary first on the PATH.
  static func shellEnvironment(home: String, prefix: String) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = home
    environment["PATH"] = prefix + "/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
    for name in ["XDG_DATA_DIRS", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "BASH_COMPLETION_USER_DIR"] {
      environment[name] = nil
    }
    return environment
  }

  /// `path` as a line `scripts/install` prints quotes it: as it is when it holds only plain
  /// path characters, else in single quotes (the quotes of fish's lines differ only for `'`
  /// and `\`, which these tests' prefixes do not hold).
  static func quotedForShell(_ path: String) -> String {
    let plain = path.allSatisfy {
      $0.isASCII && ($0.isLetter || $0.isNumber || "_./+,:@%-".contains($0))
    }
    return plain ? path : "'" + path + "'"
  }

  /// The lines work as printed, pasted into a start-up file, also for a PREFIX with a space
  /// (`~/my programs`), which an unquoted line split into two words.
  @Test(arguments: ["usr", "my programs"])
  func installSaysHowEachShellFindsItsCompletionAndTheLinesWork(prefixName: String) throws {
    let folder = TemporaryFolder("completion-message")
    let prefix = folder.url(prefixName)
    let home = folder.url("home")
    try folder.makeFolder("home")
    let result = try Self.install(prefix: prefix)
    try #require(result.status == 0, "\(result.stderrText)")
    let message = result.stdoutText
    for (shell, path) in [
      ("bash: ", "share/bash-completion/completions/squeeze"),
      ("zsh:  ", "share/zsh/site-functions/_squeeze"),
      ("fish: ", "share/fish/vendor_completions.d/squeeze.fish"),
    ] {
      #expect(message.contains("\n  \(shell)\(prefix)/\(path)\n"), "\(message)")
    }
    #expect(
      message.contains("apt-get install bash-completion") == !Self.hasBashCompletion, "\(message)")
    // No shell looks under this prefix by default: each gets the line that makes it look.
    let share = prefix + "/share"
    #expect(
      try Self.line(after: "bash-completion looks in XDG_DATA_DIRS; add to ~/.bashrc:", in: message)
        == "export XDG_DATA_DIRS=\"\(share):${XDG_DATA_DIRS:-/usr/local/share:/usr/share}\"")
    let environment = Self.shellEnvironment(home: home, prefix: prefix)

    // Without bash-completion, sourcing the script registers the completion.
    let source = try Self.line(after: "without bash-completion, add to ~/.bashrc:", in: message)
    #expect(
      source == "source \(Self.quotedForShell(share + "/bash-completion/completions/squeeze"))")
    let sourced = try Shell.run(
      "/bin/bash", ["-c", source + "\ncomplete -p squeeze"], environment: environment)
    #expect(sourced.status == 0, "\(sourced.stderrText)")
    #expect(sourced.stdoutText.contains(" -F _"), "\(sourced.stdoutText)")

    // zsh: the fpath line, then compinit, as a ~/.zshrc runs them.
    let fpath = try Self.line(after: "add to ~/.zshrc, before compinit runs:", in: message)
    #expect(fpath == "fpath=(\(Self.quotedForShell(share + "/zsh/site-functions")) $fpath)")
    let zsh = try Shell.run(
      "/usr/bin/zsh",
      [
        "-f", "-c",
        fpath + "\nautoload -U compinit; compinit -u -D; print -r -- ${_comps[squeeze]}",
      ],
      environment: environment)
    #expect(zsh.status == 0, "\(zsh.stderrText)")
    #expect(zsh.stdoutText == "_squeeze\n")

    // fish: the config.fish line, then a completion through the installed script.
    let set = try Self.line(after: "add to ~/.config/fish/config.fish:", in: message)
    #expect(
      set
        == "set -p fish_complete_path \(Self.quotedForShell(share + "/fish/vendor_completions.d"))")
    let fish = try Shell.run(
      "/usr/bin/fish", ["-c", set + "\ncomplete -C 'squeeze --one-f'"], environment: environment,
      currentDirectory: home)
    #expect(fish.status == 0, "\(fish.stderrText)")
    #expect(fish.stdoutText.hasPrefix("--one-file-system\t"), "\(fish.stdoutText)")
  }

  @Test func aPrefixUnderHomeIsFoundAsInstalledByBashCompletionAndFish() throws {
    let folder = TemporaryFolder("completion-home")
    let home = folder.url("home")
    try folder.makeFolder("home")
    let prefix = home + "/.local"
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = home
    let result = try Self.install(environment: environment, prefix: prefix)
    try #require(result.status == 0, "\(result.stderrText)")
    let message = result.stdoutText
    // bash-completion and fish look in ~/.local/share; zsh does not.
    #expect(message.contains("        found there by bash-completion\n"), "\(message)")
    #expect(!message.contains("export XDG_DATA_DIRS"), "\(message)")
    #expect(message.contains("        found there: the folder is in fish_complete_path\n"))
    #expect(!message.contains("config.fish"), "\(message)")
    #expect(
      try Self.line(after: "add to ~/.zshrc, before compinit runs:", in: message)
        == "fpath=(\(prefix)/share/zsh/site-functions $fpath)")
    // And fish does find it, with no line added.
    let fish = try Shell.run(
      "/usr/bin/fish", ["-c", "complete -C 'squeeze --one-f'"],
      environment: Self.shellEnvironment(home: home, prefix: prefix), currentDirectory: home)
    #expect(fish.status == 0, "\(fish.stderrText)")
    #expect(fish.stdoutText.hasPrefix("--one-file-system\t"), "\(fish.stdoutText)")
  }

  @Test(
    .enabled(
      if: hasBashCompletion,
      "needs Debian's bash-completion package (scripts/install-dependencies installs it)"))
  func bashCompletionLoadsTheCompletionWhereInstallSays() throws {
    /// What bash-completion's on-demand loader registers for squeeze, run as a user whose
    /// home is `home` after `setup`.
    func loaded(setup: String, home: String, prefix: String) throws -> String {
      let script =
        setup + "\nsource \(Self.bashCompletionLoader)\n_completion_loader squeeze\n"
        + "complete -p squeeze"
      let result = try Shell.run(
        "/bin/bash", ["-c", script],
        environment: Self.shellEnvironment(home: home, prefix: prefix))
      #expect(result.status == 0, "\(result.stderrText)")
      return result.stdoutText
    }
    // A prefix nobody searches: found once the printed line has run, not before.
    let folder = TemporaryFolder("bash-completion")
    try folder.makeFolder("home")
    let prefix = folder.url("usr")
    let result = try Self.install(prefix: prefix)
    try #require(result.status == 0, "\(result.stderrText)")
    let export = try Self.line(
      after: "bash-completion looks in XDG_DATA_DIRS; add to ~/.bashrc:", in: result.stdoutText)
    #expect(
      try loaded(setup: export, home: folder.url("home"), prefix: prefix)
        == "complete -F _squeeze squeeze\n")
    #expect(
      try loaded(setup: "", home: folder.url("home"), prefix: prefix)
        == "complete -F _minimal squeeze\n")
    // ~/.local: found as installed, as the message says.
    let home = folder.url("home")
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = home
    let local = try Self.install(environment: environment, prefix: home + "/.local")
    try #require(local.status == 0, "\(local.stderrText)")
    #expect(local.stdoutText.contains("        found there by bash-completion\n"))
    #expect(
      try loaded(setup: "", home: home, prefix: home + "/.local")
        == "complete -F _squeeze squeeze\n")
  }
}
