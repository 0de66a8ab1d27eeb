"""`cardgen serve`: a game built, its gallery served on localhost (`commands/serve.py`) and rebuilt on every
save until Ctrl-C."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import click

from cardgen.commands.tts_push import PushTarget
from cardgen.core.errors import CardgenError


def serve(root: Path, game: str, port: int, asked: tuple[str, ...], out: Path | None, jobs: int, open_browser: bool,
          target: PushTarget | None, draft: bool = False, lang: str | None = None) -> None:
    """Serve `game`'s gallery until Ctrl-C, rebuilding it on every save with the outputs `asked` for as `build
    --guides` asks for them (and pushing it into Tabletop Simulator at `target`); `draft` and `lang` are
    `build`'s."""
    import time

    from cardgen.commands.build_cmd import build_one, output_root, warm_games
    from cardgen.commands.serve import serve_game
    from cardgen.core.ownership import check_game_name

    if not (root / "data" / game / "game.yaml").is_file():  # no such game: say so, rather than serve its errors
        from cardgen.load.manifest import load_game

        load_game(root, game)
    out_root = output_root(root, out, lang)
    out_dir = out_root / check_game_name(game)

    def build_once() -> None:
        build_one(root, game, out_root, jobs, always=asked, draft=draft, lang=lang)

    try:
        running = serve_game(root, game, out_dir, build_once, port, lambda text: click.secho(text, fg="red", err=True),
                             after=None if target is None else partial(_push, out_dir, target),
                             warm=partial(warm_games, root, out_root, jobs, always=asked, draft=draft, lang=lang))
    except OSError as exc:
        raise CardgenError(f"cannot serve on port {port}: {exc.strerror or exc}; try --port 0") from None
    click.echo(f"{game}: gallery at {running.url} (rebuilt on every save; Ctrl-C stops)")
    if open_browser:
        import webbrowser

        webbrowser.open(running.url)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        click.echo("stopped serving")
    finally:
        running.stop()


def _push(out_dir: Path, target: PushTarget) -> None:
    """Send the game built in `out_dir` into Tabletop Simulator, saying in one line how it went."""
    from cardgen.commands.tts_push import push_built_game, report

    report(push_built_game(out_dir, target))
