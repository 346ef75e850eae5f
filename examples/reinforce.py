"""REINFORCE: a policy-gradient agent learns to walk a slippery corridor, with ember.

    python examples/reinforce.py                   # 400 episodes
    python examples/reinforce.py --episodes 100    # a quick look

The environment is written here (no gym): a corridor of cells 0 ... 9, the agent starts in
cell 0 and the goal is the last cell. Each step it moves left or right, but the floor is
slippery: with probability 0.1 it moves the other way. Reaching the goal pays +1; every step
costs 0.01; an episode ends at the goal or after 20 steps.

The policy is a small network from the one-hot cell to action logits; actions are drawn from
`Categorical(logits=...)`, and the loss is -sum_t log pi(a_t | s_t) (G_t - b), with G_t the
discounted return from step t and b a running-mean baseline (Williams, 1992).

The script is plain PyTorch code: replace the line `import ember as torch` by `import torch`
(and the two `from ember ...` lines likewise) and it runs unchanged under PyTorch
(tests/test_examples.py checks both).
"""
import argparse
import random

import ember as torch
from ember import nn
from ember.distributions import Categorical


class Corridor:
    """The slippery corridor: states are cell numbers, actions 0 (left) and 1 (right)."""

    def __init__(self, length=10, slip=0.1, step_cost=0.01, max_steps=20, seed=0):
        self.length, self.slip, self.step_cost, self.max_steps = length, slip, step_cost, \
            max_steps
        self.random = random.Random(seed)

    def reset(self):
        self.cell, self.steps = 0, 0
        return self.cell

    def step(self, action):
        """(next cell, reward, done)."""
        move = 1 if action == 1 else -1
        if self.random.random() < self.slip:
            move = -move
        self.cell = min(max(self.cell + move, 0), self.length - 1)
        self.steps += 1
        at_goal = self.cell == self.length - 1
        reward = (1.0 if at_goal else 0.0) - self.step_cost
        return self.cell, reward, at_goal or self.steps >= self.max_steps


class Policy(nn.Module):
    """one-hot cell -> 32 tanh units -> 2 action logits."""

    def __init__(self, cells):
        super().__init__()
        self.cells = cells
        self.net = nn.Sequential(nn.Linear(cells, 32), nn.Tanh(), nn.Linear(32, 2))

    def forward(self, cell):
        one_hot = nn.functional.one_hot(torch.tensor(cell), self.cells).float()
        return Categorical(logits=self.net(one_hot))


def run_episode(env, policy):
    """Log-probabilities of the actions taken and the rewards received."""
    cell, done = env.reset(), False
    log_probs, rewards = [], []
    while not done:
        pi = policy(cell)
        action = pi.sample()
        log_probs.append(pi.log_prob(action))
        cell, reward, done = env.step(action.item())
        rewards.append(reward)
    return log_probs, rewards


def discounted_returns(rewards, gamma):
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        returns.append(g)
    return torch.tensor(returns[::-1])


def train(episodes=400, lr=0.02, gamma=0.97, seed=0, quiet=False):
    """Train a policy; returns it with the list of episode returns."""
    torch.manual_seed(seed)
    env = Corridor(seed=seed)
    policy = Policy(env.length)
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    baseline, history = 0.0, []
    for episode in range(1, episodes + 1):
        log_probs, rewards = run_episode(env, policy)
        returns = discounted_returns(rewards, gamma)
        loss = -(torch.stack(log_probs) * (returns - baseline)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        baseline = 0.9 * baseline + 0.1 * returns[0].item()
        history.append(sum(rewards))
        if not quiet and episode % 50 == 0:
            recent = history[-50:]
            print(f"episode {episode:4d}  mean return of the last 50: "
                  f"{sum(recent) / len(recent):+.3f}")
    return policy, history


def greedy_steps(policy, length=10):
    """Steps the greedy policy needs on a floor without slips (length - 1 is optimal)."""
    env = Corridor(length=length, slip=0.0)
    cell, done, steps = env.reset(), False, 0
    with torch.no_grad():
        while not done:
            cell, _, done = env.step(policy(cell).probs.argmax().item())
            steps += 1
    return steps


def random_policy_return(episodes=200, seed=1):
    """The mean return of a policy that picks left or right with equal probability."""
    env, coin, total = Corridor(seed=seed), random.Random(seed), 0.0
    for _ in range(episodes):
        env.reset()
        done = False
        while not done:
            _, reward, done = env.step(coin.randrange(2))
            total += reward
    return total / episodes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=400)
    args = parser.parse_args()
    policy, history = train(episodes=args.episodes)
    print(f"a random policy's mean return: {random_policy_return():+.3f}")
    print(f"greedy policy reaches the goal in {greedy_steps(policy)} steps (optimal: 9)")


if __name__ == "__main__":
    main()
