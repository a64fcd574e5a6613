"""BFCL-DEFAULTS: a BFCL method's mutable default (TwitterAPI.post_tweet's ``mentions=[]``) is
given to each call as a fresh copy, so one rollout's calls never change what a later rollout's
calls return. Found when issue 38's glyphh-ada miss_param run, scored in the same process before
the gold cross-check, made multi_turn_base_5's gold ``post_tweet`` answer ``"mentions":
["VehicleGuru"]`` where BFCL's executor in a fresh process answers ``[]``: ``mention`` extends
the tweet's list in place, and that list was the method's shared default."""

from __future__ import annotations

import json

import pytest

from prefixexec.adapters.bfcl import backend, execute


def post_then_mention(entry: backend.Entry) -> list[str]:
    """One world: authenticate, post without mentions, then mention someone in that tweet;
    the texts of the post and of a second post."""
    world = execute.World(entry)
    texts = []
    for name, kwargs in (
        ("authenticate_twitter", {"username": "dr_smith", "password": "securePass123"}),
        ("post_tweet", {"content": "first"}),
        ("mention", {"tweet_id": 0, "mentioned_usernames": ["VehicleGuru"]}),
        ("post_tweet", {"content": "second"}),
    ):
        info = world.method(name)
        assert info is not None
        texts.append(world.execute(info, kwargs).text)
    return texts


@pytest.mark.spec("BFCL-DEFAULTS")
def test_a_mutated_default_does_not_reach_a_later_call_or_rollout() -> None:
    entry = backend.entries("multi_turn_base")["multi_turn_base_5"]  # involves TwitterAPI
    first = post_then_mention(entry)
    # In BFCL's own class the shared default would now hold "VehicleGuru" (mention extends the
    # first tweet's list in place): the second post, and every later rollout's posts, would
    # carry it. Here each post gets its own empty list.
    assert [json.loads(t)["mentions"] for t in (first[1], first[3])] == [[], []]
    again = post_then_mention(entry)
    assert again == first
    info = backend.catalogue().methods["post_tweet"]
    assert dict(info.defaults) == {"tags": (), "mentions": ()}
