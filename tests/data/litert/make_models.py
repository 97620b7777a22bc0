"""The LiteRT models here, converted once with tensorflow-cpu 2.21's TFLite converter (random weights; not run in CI):
a small CNN (fp32, and full-integer int8) and a two-layer transformer block (fp32).

    pip install tensorflow-cpu==2.21.0 && python make_models.py
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
rng = np.random.default_rng(0)


def cnn():
    x = inp = tf.keras.Input((64, 64, 3), batch_size=1)
    for co in (16, 32, 64):
        x = tf.keras.layers.Conv2D(co, 3, padding="same", activation="relu")(x)
        x = tf.keras.layers.MaxPooling2D(2)(x)
    x = tf.keras.layers.DepthwiseConv2D(3, padding="same")(x)
    x = tf.keras.layers.Conv2D(64, 1)(x)
    x = x * tf.keras.layers.Activation("sigmoid")(x)
    x = tf.keras.layers.UpSampling2D(2)(x)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    x = tf.keras.layers.Dense(10)(x)
    return tf.keras.Model(inp, tf.keras.layers.Softmax()(x))


def tfm(seq=32, d=64, layers=2):
    x = inp = tf.keras.Input((seq, d), batch_size=1)
    for _ in range(layers):
        h = tf.keras.layers.LayerNormalization()(x)
        x = x + tf.keras.layers.MultiHeadAttention(4, d // 4)(h, h)
        h = tf.keras.layers.Dense(4 * d, activation="gelu")(x)
        x = x + tf.keras.layers.Dense(d)(h)
    return tf.keras.Model(inp, tf.keras.layers.GlobalAveragePooling1D()(x))


def convert(model, name, int8=False):
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        shape = model.inputs[0].shape
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([rng.standard_normal(shape).astype(np.float32)] for _ in range(8))
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    with open(f"{name}.tflite", "wb") as f:
        f.write(conv.convert())


convert(cnn(), "cnn")
convert(cnn(), "cnn_int8", int8=True)
convert(tfm(), "tfm")
