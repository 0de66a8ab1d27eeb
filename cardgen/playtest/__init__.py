"""After a build, for a playtest: the numbers of every deck (`cardgen stats`) and their page, the
designer's own balance simulations (`cardgen simulate`, the one command that runs their Python), and
pictures of cards to share (`cardgen showcase`).
"""
