//! Flags that override config fields, declared once: each line names the flag, its kind and the
//! config field it sets, and the macro writes both the clap field and the code that applies it.

/// `overrides! { pub struct Name => Target { kind flag: Type => field.path, ... } }` declares a
/// clap `Args` group and its `apply(self, &mut Target)`.
///
/// * `opt` (an `Option<T>`): `--flag VALUE` replaces the field, a `T` or an `Option<T>`
///   (absent: the config's value stands);
/// * `switch` (a `bool`): a flag without a value sets the field to true;
/// * `unset` (a `bool`): a flag without a value sets the field to false (`--no-stream`);
/// * `list` (a `Vec<T>`): a repeatable flag whose values are appended to the field's.
///
/// The field types are written out in full because clap's derive reads them as written.
macro_rules! overrides {
    (
        $(#[$smeta:meta])*
        pub struct $name:ident => $target:ty {
            $(
                $(#[$fmeta:meta])*
                $kind:ident $flag:ident: $ty:ty => $($field:ident).+ ,
            )*
        }
    ) => {
        $(#[$smeta])*
        #[derive(clap::Args, Debug, Default, Clone)]
        pub struct $name {
            $( $(#[$fmeta])* pub $flag: $ty, )*
        }

        impl $name {
            /// Set the config fields that the given flags override.
            pub fn apply(self, target: &mut $target) {
                $( overrides!(@set $kind self.$flag, target.$($field).+); )*
            }
        }
    };
    (@set opt $value:expr, $field:expr) => {
        if let Some(v) = $value {
            $field = v.into();
        }
    };
    (@set switch $value:expr, $field:expr) => {
        if $value {
            $field = true;
        }
    };
    (@set unset $value:expr, $field:expr) => {
        if $value {
            $field = false;
        }
    };
    (@set list $value:expr, $field:expr) => {
        $field.extend($value);
    };
}

pub(crate) use overrides;
