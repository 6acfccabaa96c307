print("camd")
