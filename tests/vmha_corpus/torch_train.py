# A small PyTorch training job: a two-layer MLP fitted to synthetic data for
# a few hundred steps, the loss printed every 20 steps, the model saved at the end.
import sys
import torch
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
torch.manual_seed(0)
torch.set_num_threads(2)
x = torch.randn(512, 32)
w_true = torch.randn(32, 1)
y = x @ w_true + 0.1 * torch.randn(512, 1)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for step in range(1, steps + 1):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.5f}", flush=True)
torch.save(model.state_dict(), "model.pt")
print("saved model.pt")
