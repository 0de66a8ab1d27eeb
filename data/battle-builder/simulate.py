"""Battle Builder's balance simulation: the monster battles of a 2-player game, as the rulebook describes them
(../shared/seeds/000_1c81ba808f4ef72a.txt: Monster Battles, Earning Tokens, Spending Tokens, Balancing & Testing
Notes). Run by `cardgen simulate battle-builder` (game.yaml: `simulations:`), never by a build.

One run is one game's 9 monster battles (Total Game Arc) for a team of 2 players (Setup (2 Players)), with these
player policies (ours: the rulebook leaves them to the players; data/battle-builder/README.md says the same):

- Monster: each round the team draws 3 of the 9 monsters and fights the one nearest the round's stage: Easy in
  rounds 1-3, Medium in 4-6, Hard in 7-9 (a random one of the nearest on a tie).
- Action: each player plays the highest-value card left in its attack deck that its stamina can pay (a card's
  min_stamina); a played card is discarded, and an empty deck is shuffled again from its discards (Deck cycling).
- Stamina: 4 a turn ("20 should last 4-6 turns of moderate spending"), at least the card's min_stamina, at most
  what is left. Highest stamina acts first, the monster at its printed speed, ties by a coin flip.
- Shop (System A, unified skill tokens; each player gets the monster's whole reward): after each battle a player
  buys while it can afford something: a card of the kind it has bought fewer of (attack on a tie) from the highest
  tier it can afford (a random one of the shop's copies left, shared by both players), else an HP upgrade (3 tokens,
  +5 HP, up to +20); it keeps what is left. No stamina upgrades, no deck thinning.

Rules as written: a player attacked draws the top card of its defense deck and blocks that much; the monster does
the same from the defense deck its deck types name, and a monster with an attack deck adds its top card to its
attack. The battle ends when the monster is at 0 HP (a win) or a player is (a loss), checked at the end of a turn;
a player at 0 HP does not act. HP and stamina start full each battle (the trackers' 20 plus upgrades). Rewards:
the monster's reward if nobody fell, half (rounded down) if one player fell, none if both did. Monster special
rules: Targeting (the slower player, the one who dealt the most damage last turn, the one with the higher HP, the
one with more VP: a coin flip here, as both have the same), AoE, Regeneration, Counter, Speed Drain, Enrage,
Armor Piercing; without a targeting rule the monster attacks a random player. Card effects other than
min_stamina are not modelled. A battle still going after 30 turns counts as a loss (measure `stalemate`).

Measures: win_easy, win_medium, win_hard (one yes/no per battle), tokens_per_battle (the skill tokens a player
earns in a battle), turns, stalemate.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

ROUNDS = 9
STAGES = ["Easy"] * 3 + ["Medium"] * 3 + ["Hard"] * 3
LEVEL = {"Easy": 0, "Medium": 1, "Hard": 2}
START_HP = START_STAMINA = 20
STAMINA_PER_TURN = 4
MAX_TURNS = 30
TEAM = 2


class Pile:
    """A deck drawn from the top and shuffled again from its discards when empty."""

    def __init__(self, cards: list[dict], rng: random.Random) -> None:
        self.rng = rng
        self.draw: list[dict] = list(cards)
        self.discard: list[dict] = []
        rng.shuffle(self.draw)

    def refill(self) -> None:
        """Shuffle the discards into an empty deck."""
        if not self.draw:
            self.draw, self.discard = self.discard, []
            self.rng.shuffle(self.draw)

    def top(self) -> dict:
        """Draw the top card (it goes to the discards)."""
        self.refill()
        card = self.draw.pop()
        self.discard.append(card)
        return card

    def take(self, card: dict) -> None:
        """Play a chosen card of the deck (it goes to the discards)."""
        self.draw.remove(card)
        self.discard.append(card)


@dataclass
class Player:
    """A player's decks and stats between battles, and its state in one."""

    attacks: list[dict]
    defenses: list[dict]
    max_hp: int = START_HP
    tokens: int = 0
    bought: dict = field(default_factory=lambda: {"Attack": 0, "Defense": 0})
    hp: int = 0
    stamina: int = 0
    bid: int = 0
    dealt: int = 0
    dealt_last_turn: int = 0


def copies(cards: list[dict]) -> list[dict]:
    """A deck's cards, each as many times as its copies."""
    return [card for card in cards for _ in range(card["copies"])]


def specials(monster: dict) -> dict[str, str]:
    """A monster's special rules by their bold name: {'Regeneration': 'heals 2 HP ...'}."""
    found = {}
    for text in monster.get("special") or []:
        match = re.match(r"\*\*(.+?):\*\*\s*(.*)", text)
        if match:
            found[match.group(1)] = match.group(2).lower()
    return found


def simulate(cards: dict[str, list[dict]], rng: random.Random, values: dict) -> dict[str, list]:
    """One game's 9 monster battles for a team of 2 (see the module's policies); the measures of its battles. The
    monsters' special numbers are game.yaml's `values:`, as the cards print them."""
    starting = cards["basic-attacks"]
    per_player = {c["name"]: c["copies"] // 4 for c in starting}  # the data's copies are for 4 players
    team = [Player(attacks=[c for c in starting for _ in range(per_player[c["name"]])],
                   defenses=[c for c in cards["basic-defenses"] for _ in range(c["copies"] // 4)])
            for _ in range(TEAM)]
    shop = [c for deck, deck_cards in cards.items() if "-tier-" in deck for c in copies(deck_cards)]
    hp_upgrade = next(c for c in cards["upgrades"] if c["name"] == "HP Upgrade")
    measures: dict[str, list] = {"win_easy": [], "win_medium": [], "win_hard": [], "tokens_per_battle": [],
                                 "turns": [], "stalemate": []}
    for round_index in range(ROUNDS):
        monster = choose_monster(rng.sample(cards["monsters"], 3), STAGES[round_index], rng)
        won, fallen, turns = battle(team, monster, cards, values, rng)
        tokens = monster["reward"] if fallen == 0 else monster["reward"] // 2 if fallen == 1 else 0
        measures[f"win_{monster['difficulty'].lower()}"].append(won)
        measures["tokens_per_battle"].append(tokens)
        measures["turns"].append(turns)
        measures["stalemate"].append(turns >= MAX_TURNS and not won)
        for player in team:
            player.tokens += tokens
            go_shopping(player, shop, hp_upgrade, rng)
    return measures


def choose_monster(drawn: list[dict], stage: str, rng: random.Random) -> dict:
    """The drawn monster nearest the round's stage of difficulty (a random one of the nearest)."""
    distance = [abs(LEVEL[m["difficulty"]] - LEVEL[stage]) for m in drawn]
    return rng.choice([m for m, d in zip(drawn, distance) if d == min(distance)])


def go_shopping(player: Player, shop: list[dict], hp_upgrade: dict, rng: random.Random) -> None:
    """Buy while something is affordable: a card of the kind bought fewer of, from the highest affordable tier,
    else an HP upgrade below its cap."""
    while True:
        kind = "Attack" if player.bought["Attack"] <= player.bought["Defense"] else "Defense"
        offer = [c for c in shop if c["kind"] == kind and c["cost"] <= player.tokens]
        if offer:
            tier = max(c["tier"] for c in offer)
            card = rng.choice([c for c in offer if c["tier"] == tier])
            shop.remove(card)
            player.tokens -= card["cost"]
            player.bought[kind] += 1
            (player.attacks if kind == "Attack" else player.defenses).append(card)
        elif player.tokens >= hp_upgrade["cost"] and player.max_hp - START_HP < hp_upgrade["cap"]:
            player.tokens -= hp_upgrade["cost"]
            player.max_hp += hp_upgrade["amount"]
        else:
            return


def monster_decks(monster: dict, cards: dict[str, list[dict]], rng: random.Random) -> tuple[Pile | None, Pile | None]:
    """The monster's defense and attack piles, from the decks its deck types name."""
    defense = attack = None
    for deck in monster["deck_types"]:
        pile = Pile(copies(cards[deck]), rng)
        if cards[deck][0]["kind"] == "Defense":
            defense = pile
        else:
            attack = pile
    return defense, attack


def battle(team: list[Player], monster: dict, cards: dict[str, list[dict]], values: dict,
           rng: random.Random) -> tuple[bool, int, int]:
    """One monster battle: (won, players fallen, turns); its special rules' numbers are `values`'."""
    rules = specials(monster)
    hp = monster["hp"]
    defense, attack = monster_decks(monster, cards, rng)
    piles = {id(p): (Pile(p.attacks, rng), Pile(p.defenses, rng)) for p in team}
    for player in team:
        player.hp, player.stamina, player.dealt_last_turn = player.max_hp, START_STAMINA, 0
    for turn in range(1, MAX_TURNS + 1):
        plays = {id(p): choose_action(p, piles[id(p)][0]) for p in team}
        if "Speed Drain" in rules:
            fastest = max(rng.sample(team, len(team)), key=lambda p: p.bid)
            fastest.stamina = max(0, fastest.stamina - values["speed_drain_stamina"])
        actors = [(p.bid, rng.random(), p) for p in team] + [(monster["speed"], rng.random(), None)]
        for _, _, actor in sorted(actors, key=lambda a: (a[0], a[1]), reverse=True):
            if actor is None and hp > 0:
                monster_attacks(monster, rules, turn, team, piles, attack, values, rng)
            elif actor is not None and actor.hp > 0 and hp > 0:
                blocked = defense.top()["value"] if defense else 0
                dealt = max(0, plays[id(actor)]["value"] - blocked)
                hp -= dealt
                actor.dealt += dealt
                if dealt and "Counter" in rules:
                    actor.hp -= values["counter_damage"]
        if hp > 0 and "Regeneration" in rules:
            hp = min(monster["hp"], hp + values["regeneration_hp"])
        for player in team:
            player.dealt_last_turn, player.dealt = player.dealt, 0
        fallen = sum(p.hp <= 0 for p in team)
        if hp <= 0 or fallen:
            return hp <= 0, fallen, turn
    return False, 0, MAX_TURNS


def choose_action(player: Player, pile: Pile) -> dict:
    """The highest-value card left that the player's stamina pays for (any card when none is), and its bid."""
    pile.refill()
    payable = [c for c in pile.draw if (c.get("min_stamina") or 0) <= player.stamina] or pile.draw
    card = max(payable, key=lambda c: c["value"])
    pile.take(card)
    player.bid = min(player.stamina, max(card.get("min_stamina") or 0, STAMINA_PER_TURN))
    player.stamina -= player.bid
    return card


def monster_attacks(monster: dict, rules: dict[str, str], turn: int, team: list[Player], piles: dict,
                    attack: Pile | None, values: dict, rng: random.Random) -> None:
    """The monster's attack this turn on its target (both players with AoE)."""
    standing = [p for p in team if p.hp > 0]
    if not standing:
        return
    enraged = "Enrage" in rules and turn > values["enrage_turn"]
    damage = (monster["attack"] + (values["enrage_attack"] if enraged else 0)
              + (attack.top()["value"] if attack else 0))
    for target in standing if "AoE" in rules else [pick_target(rules.get("Targeting", ""), standing, rng)]:
        blocked = 0 if "Armor Piercing" in rules else piles[id(target)][1].top()["value"]
        target.hp -= max(0, damage - blocked)


def pick_target(rule: str, standing: list[Player], rng: random.Random) -> Player:
    """The player a targeting rule picks (a coin flip among equals; no rule: a random player)."""
    keys = {"slower": lambda p: -p.bid, "most damage": lambda p: p.dealt_last_turn, "higher current hp": lambda p: p.hp}
    key = next((k for word, k in keys.items() if word in rule), None)
    if key is None:
        return rng.choice(standing)
    best = max(key(p) for p in standing)
    return rng.choice([p for p in standing if key(p) == best])
